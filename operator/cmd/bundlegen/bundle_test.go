package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// repoRoot finds the module root so the tests read the committed bundle/ and config/.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

// TestBundleValidates runs what `make bundle -validate` runs against the committed bundle: the validators of
// `operator-sdk bundle validate --select-optional suite=operatorframework`, zero errors, only justified warnings.
func TestBundleValidates(t *testing.T) {
	if err := Validate(filepath.Join(repoRoot(t), "bundle")); err != nil {
		t.Error(err)
	}
}

func loadCSV(t *testing.T) *operatorsv1alpha1.ClusterServiceVersion {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "bundle", "manifests", defaultPackage+".clusterserviceversion.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	if err := yaml.UnmarshalStrict(data, csv); err != nil {
		t.Fatalf("decode CSV: %v", err)
	}
	return csv
}

// TestAnnotationsMatchDockerfileLabels: OLM reads annotations.yaml from the bundle image, while registries index the
// image labels; both must say the same.
func TestAnnotationsMatchDockerfileLabels(t *testing.T) {
	root := repoRoot(t)
	data, err := os.ReadFile(filepath.Join(root, "bundle", "metadata", "annotations.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var ann struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.UnmarshalStrict(data, &ann); err != nil {
		t.Fatalf("decode annotations.yaml: %v", err)
	}
	df, err := os.ReadFile(filepath.Join(root, "bundle.Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{}
	var copies []string
	sc := bufio.NewScanner(bytes.NewReader(df))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "LABEL "); ok {
			k, v, _ := strings.Cut(rest, "=")
			labels[k] = v
		}
		if rest, ok := strings.CutPrefix(line, "COPY "); ok {
			copies = append(copies, rest)
		}
	}
	if len(ann.Annotations) == 0 {
		t.Fatal("annotations.yaml has no annotations")
	}
	for k, v := range ann.Annotations {
		if labels[k] != v {
			t.Errorf("annotation %s=%q, Dockerfile label %q", k, v, labels[k])
		}
	}
	for k := range labels {
		if _, ok := ann.Annotations[k]; !ok {
			t.Errorf("Dockerfile label %s is not in annotations.yaml", k)
		}
	}
	// The directories the labels point at must be where the Dockerfile copies the bundle to.
	for _, key := range []string{"operators.operatorframework.io.bundle.manifests.v1", "operators.operatorframework.io.bundle.metadata.v1",
		"operators.operatorframework.io.test.config.v1"} {
		want := "/" + ann.Annotations[key]
		found := false
		for _, c := range copies {
			if strings.HasSuffix(c, " "+want) {
				found = true
			}
		}
		if !found {
			t.Errorf("no COPY to %s (%s) in bundle.Dockerfile", want, key)
		}
	}
}

// TestCSVDeploymentIsRestricted: the manager must satisfy the restricted Pod Security Standard and mount the
// Gardener kubeconfig read-only with mode 0400.
func TestCSVDeploymentIsRestricted(t *testing.T) {
	csv := loadCSV(t)
	deps := csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs
	if len(deps) == 0 {
		t.Fatal("CSV has no deployment")
	}
	for _, d := range deps {
		pod := d.Spec.Template.Spec
		psc := pod.SecurityContext
		if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
			t.Errorf("%s: pod securityContext.runAsNonRoot must be true", d.Name)
		}
		if psc == nil || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("%s: pod seccompProfile must be RuntimeDefault", d.Name)
		}
		if pod.HostNetwork || pod.HostPID || pod.HostIPC {
			t.Errorf("%s: host namespaces must not be used", d.Name)
		}
		for _, c := range append(append([]corev1.Container{}, pod.InitContainers...), pod.Containers...) {
			sc := c.SecurityContext
			switch {
			case sc == nil:
				t.Errorf("%s/%s: no securityContext", d.Name, c.Name)
				continue
			case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
				t.Errorf("%s/%s: allowPrivilegeEscalation must be false", d.Name, c.Name)
			case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
				t.Errorf("%s/%s: readOnlyRootFilesystem must be true", d.Name, c.Name)
			case sc.Privileged != nil && *sc.Privileged:
				t.Errorf("%s/%s: must not be privileged", d.Name, c.Name)
			case sc.Capabilities == nil || len(sc.Capabilities.Add) > 0 || !contains(sc.Capabilities.Drop, "ALL"):
				t.Errorf("%s/%s: capabilities must drop ALL and add none", d.Name, c.Name)
			case sc.SeccompProfile != nil && sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
				t.Errorf("%s/%s: seccompProfile must be RuntimeDefault", d.Name, c.Name)
			case sc.RunAsNonRoot != nil && !*sc.RunAsNonRoot:
				t.Errorf("%s/%s: runAsNonRoot must not be overridden to false", d.Name, c.Name)
			}
			if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() ||
				c.Resources.Limits.Cpu().IsZero() || c.Resources.Limits.Memory().IsZero() {
				t.Errorf("%s/%s: cpu and memory requests and limits must be set", d.Name, c.Name)
			}
			if c.LivenessProbe == nil || c.ReadinessProbe == nil {
				t.Errorf("%s/%s: liveness and readiness probes must be set", d.Name, c.Name)
			}
		}
		assertGardenerKubeconfigMount(t, d.Name, pod)
	}
}

func assertGardenerKubeconfigMount(t *testing.T, deployment string, pod corev1.PodSpec) {
	t.Helper()
	var vol *corev1.Volume
	for i := range pod.Volumes {
		if pod.Volumes[i].Name == "gardener-kubeconfig" {
			vol = &pod.Volumes[i]
		}
	}
	if vol == nil || vol.Secret == nil {
		t.Errorf("%s: no Secret volume gardener-kubeconfig", deployment)
		return
	}
	if vol.Secret.DefaultMode == nil || *vol.Secret.DefaultMode != 0o400 {
		t.Errorf("%s: gardener-kubeconfig defaultMode must be 0400", deployment)
	}
	for _, c := range pod.Containers {
		for _, m := range c.VolumeMounts {
			if m.Name == vol.Name && !m.ReadOnly {
				t.Errorf("%s/%s: gardener-kubeconfig must be mounted read-only", deployment, c.Name)
			}
		}
	}
}

// TestRBACIsLeastPrivilege: no wildcards anywhere, and Secrets only through namespaced permissions.
func TestRBACIsLeastPrivilege(t *testing.T) {
	csv := loadCSV(t)
	spec := csv.Spec.InstallStrategy.StrategySpec
	if len(spec.Permissions)+len(spec.ClusterPermissions) == 0 {
		t.Fatal("CSV grants no permissions at all; the bundle generator lost the RBAC")
	}
	check := func(where string, rules []rbacv1.PolicyRule, clusterWide bool) {
		for _, r := range rules {
			for _, list := range [][]string{r.Verbs, r.Resources, r.APIGroups, r.NonResourceURLs} {
				for _, v := range list {
					if strings.Contains(v, "*") {
						t.Errorf("%s: wildcard %q in rule %+v", where, v, r)
					}
				}
			}
			if clusterWide && contains(r.APIGroups, "") && contains(r.Resources, "secrets") {
				t.Errorf("%s: cluster-wide access to Secrets in rule %+v; use a namespaced marker (namespace=...)", where, r)
			}
		}
	}
	for _, p := range spec.Permissions {
		check("permissions["+p.ServiceAccountName+"]", p.Rules, false)
	}
	for _, p := range spec.ClusterPermissions {
		check("clusterPermissions["+p.ServiceAccountName+"]", p.Rules, true)
	}
	// RBAC objects shipped next to the CSV (editor/viewer roles) follow the same rules.
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "bundle", "manifests", "*_rbac.authorization.k8s.io_v1_*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		role := &rbacv1.ClusterRole{}
		if err := yaml.Unmarshal(data, role); err != nil {
			t.Fatalf("decode %s: %v", f, err)
		}
		check(filepath.Base(f), role.Rules, role.Kind == "ClusterRole")
	}
}

func contains[S ~string](list []S, s S) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
