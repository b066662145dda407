package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim/operator/manifests"
)

// TestInstallModesAreWhatWorks: the CSV declares only the install modes the manager implements. It watches the
// namespace(s) OLM writes into the pod annotation olm.targetNamespaces and holds only namespaced permissions there;
// AllNamespaces would make OLM lift those permissions (Secrets included) to ClusterRoles.
func TestInstallModesAreWhatWorks(t *testing.T) {
	csv := loadCSV(t)
	got := map[operatorsv1alpha1.InstallModeType]bool{}
	for _, m := range csv.Spec.InstallModes {
		got[m.Type] = m.Supported
	}
	want := map[operatorsv1alpha1.InstallModeType]bool{
		operatorsv1alpha1.InstallModeTypeOwnNamespace:    true,
		operatorsv1alpha1.InstallModeTypeSingleNamespace: true,
		operatorsv1alpha1.InstallModeTypeMultiNamespace:  false,
		operatorsv1alpha1.InstallModeTypeAllNamespaces:   false,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("install modes (-want +got):\n%s", diff)
	}
	c := managerContainerOf(t, csv)
	var watch *corev1.EnvVar
	for i := range c.Env {
		if c.Env[i].Name == "KIM_WATCH_NAMESPACES" {
			watch = &c.Env[i]
		}
	}
	if watch == nil || watch.ValueFrom == nil || watch.ValueFrom.FieldRef == nil ||
		watch.ValueFrom.FieldRef.FieldPath != "metadata.annotations['olm.targetNamespaces']" {
		t.Errorf("KIM_WATCH_NAMESPACES must come from the pod annotation olm.targetNamespaces, got %+v", watch)
	}
	for _, a := range c.Args {
		if strings.HasPrefix(a, "--watch-namespaces") {
			t.Errorf("argument %s overrides olm.targetNamespaces", a)
		}
	}
}

// clusterScoped are the only resources the manager may be granted cluster-wide: the metrics endpoint's
// authentication and authorization reviews, which exist only at cluster scope.
var clusterScoped = map[string]bool{
	"authentication.k8s.io/tokenreviews":        true,
	"authorization.k8s.io/subjectaccessreviews": true,
}

// TestRBACIsNamespaced: everything the manager does to Runtimes, GardenerClusters, Secrets, ConfigMaps, leases and
// events is granted through `permissions` (Roles OLM creates in the install namespace and copies into the target
// namespace), never through `clusterPermissions`.
func TestRBACIsNamespaced(t *testing.T) {
	spec := loadCSV(t).Spec.InstallStrategy.StrategySpec
	for _, p := range spec.ClusterPermissions {
		for _, r := range p.Rules {
			if len(r.NonResourceURLs) > 0 {
				t.Errorf("clusterPermissions[%s]: non-resource URLs %v", p.ServiceAccountName, r.NonResourceURLs)
			}
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					if !clusterScoped[g+"/"+res] {
						t.Errorf("clusterPermissions[%s] grants %s/%s cluster-wide; use a namespaced +kubebuilder:rbac marker (namespace=...) or a Role",
							p.ServiceAccountName, g, res)
					}
				}
			}
		}
	}
	granted := map[string]bool{}
	for _, p := range spec.Permissions {
		for _, r := range p.Rules {
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					granted[g+"/"+res] = true
				}
			}
		}
	}
	for _, need := range []string{"infrastructuremanager.kyma-project.io/runtimes", "infrastructuremanager.kyma-project.io/gardenerclusters",
		"infrastructuremanager.kyma-project.io/serviceaccountkubeconfigs",
		"/secrets", "/configmaps", "coordination.k8s.io/leases"} {
		if !granted[need] {
			t.Errorf("the namespaced permissions lack %s; the manager cannot work (or the bundle generator lost a Role)", need)
		}
	}
}

// podSpecArgs are the only arguments of the manager container: values the pod spec itself depends on (ports, the
// mounted kubeconfig and metrics certificate). Anything else given as an argument could not be changed through Subscription.spec.config.env
// (a flag beats its KIM_<FLAG> variable).
var podSpecArgs = map[string]bool{
	"--metrics-bind-address":      true,
	"--health-probe-bind-address": true,
	"--gardener-kubeconfig-path":  true,
	"--metrics-cert-path":         true,
}

// TestSubscriptionEnvCanConfigure: under OLM the Subscription can add environment variables but not change
// arguments, so the manager's settings come from the environment, and the configuration ConfigMap is named by
// KIM_CONFIG_MAP whose default is the ConfigMap the bundle ships (with the key the manager reads).
func TestSubscriptionEnvCanConfigure(t *testing.T) {
	csv := loadCSV(t)
	c := managerContainerOf(t, csv)
	for _, a := range c.Args {
		name, _, _ := strings.Cut(a, "=")
		if !podSpecArgs[name] {
			t.Errorf("argument %s cannot be overridden by Subscription.spec.config.env; set it in the container env instead", a)
		}
	}
	var configMap string
	for _, e := range c.Env {
		if e.Name == "KIM_CONFIG_MAP" {
			configMap = e.Value
		}
	}
	if configMap == "" {
		t.Fatal("the manager container has no KIM_CONFIG_MAP")
	}
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "bundle", "manifests", configMap+"_v1_configmap.yaml"))
	if err != nil {
		t.Fatalf("KIM_CONFIG_MAP=%s, but the bundle ships no such ConfigMap as the default: %v", configMap, err)
	}
	cm := &corev1.ConfigMap{}
	if err := yaml.UnmarshalStrict(data, cm); err != nil {
		t.Fatal(err)
	}
	if _, ok := cm.Data["config.yaml"]; !ok {
		t.Errorf("the default ConfigMap %s has no key config.yaml", configMap)
	}
}

func managerContainerOf(t *testing.T, csv *operatorsv1alpha1.ClusterServiceVersion) corev1.Container {
	t.Helper()
	for _, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		for _, c := range d.Spec.Template.Spec.Containers {
			if c.Name == managerContainer {
				return c
			}
		}
	}
	t.Fatal("no manager container in the CSV")
	return corev1.Container{}
}

// TestMinKubeVersionIsTheTrueMinimum: the CSV states exactly the oldest Kubernetes whose API server accepts the
// CRDs, no older (installs would fail) and no newer (a false requirement).
func TestMinKubeVersionIsTheTrueMinimum(t *testing.T) {
	objs, err := manifests.Render(filepath.Join(repoRoot(t), "config", "crd"))
	if err != nil {
		t.Fatal(err)
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, u := range objs {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := fromUnstructured(u, crd); err != nil {
			t.Fatal(err)
		}
		crds = append(crds, crd)
	}
	need, _, err := requiredKubeVersion(crds)
	if err != nil {
		t.Fatal(err)
	}
	if got := loadCSV(t).Spec.MinKubeVersion; got != need {
		t.Errorf("CSV minKubeVersion %s, the operator needs exactly %s", got, need)
	}
}

// TestOldestKubeVersionIsTheClaimedMinimum: make test-admission-oldest runs the admission tests on the Kubernetes
// minor the CSV claims as its minimum, so the claim is what is tested.
func TestOldestKubeVersionIsTheClaimedMinimum(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^OLDEST_KUBE_VERSION \?= (\d+)\.(\d+)\.\d+$`).FindStringSubmatch(string(raw))
	if m == nil {
		t.Fatal("the Makefile sets no OLDEST_KUBE_VERSION ?= X.Y.Z")
	}
	claimed := loadCSV(t).Spec.MinKubeVersion
	if want := m[1] + "." + m[2] + ".0"; claimed != want {
		t.Errorf("CSV minKubeVersion %s, but test-admission-oldest runs Kubernetes %s.%s", claimed, m[1], m[2])
	}
}

func TestMinKubeVersionFollowsCELLibraries(t *testing.T) {
	crdWithRule := func(rule string) []*apiextensionsv1.CustomResourceDefinition {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		crd.Name = "things.example.io"
		crd.Spec.Versions = []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Schema: &apiextensionsv1.CustomResourceValidation{
			OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"cidr": {Type: "string", MaxLength: ptr(int64(64)),
						XValidations: apiextensionsv1.ValidationRules{{Rule: rule}}},
				}},
			}},
		}}}
		return []*apiextensionsv1.CustomResourceDefinition{crd}
	}
	for _, tc := range []struct {
		reason string
		rule   string
		want   string
	}{
		{"plain CEL works wherever validation rules are GA", "self.startsWith('10.')", "1.29.0"},
		{"isCIDR arrived with 1.30's libraries, so new CRDs may use it from 1.31", "isCIDR(self)", "1.31.0"},
		{"the format library arrived in 1.31, usable from 1.32", "!format.dns1123Label().validate(self).hasValue()", "1.32.0"},
	} {
		got, err := minKubeVersion(crdWithRule(tc.rule))
		if err != nil {
			t.Errorf("%s: %v", tc.reason, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.reason, got, tc.want)
		}
	}
	if _, err := minKubeVersion(crdWithRule("self.noSuchFunction()")); err == nil {
		t.Error("a rule no Kubernetes compiles must be an error")
	}
	if err := checkMinKubeVersion("1.30.0", crdWithRule("isCIDR(self)")); err == nil || !strings.Contains(err.Error(), "needs Kubernetes 1.33.0") {
		t.Errorf("declaring 1.30 for a CRD with isCIDR: %v, want 1.33", err)
	}
	// The rules compile on 1.31, but status writes of Runtimes stored under the previous CRD need 1.33.
	if err := checkMinKubeVersion("1.32.0", crdWithRule("isCIDR(self)")); err == nil || !strings.Contains(err.Error(), "ratchet validation on status writes") {
		t.Errorf("declaring 1.32: %v, want the status ratcheting floor", err)
	}
	if err := checkMinKubeVersion("1.33.0", crdWithRule("isCIDR(self)")); err != nil {
		t.Errorf("declaring 1.33: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }
