package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim/test/sandbox/gardenbox"
	"github.com/kyma-project/kim/test/sandbox/node"
	"github.com/kyma-project/kim/test/testenv"
)

// TestMigrationPreviousDeploymentProvisionsIntegration (issue 39 item 5): this manager's binary in the previous
// infrastructure manager's own Deployment, unchanged (operator/cmd/manager/testdata/previous-deployment.yaml, its
// public manifests rendered), run by the node stand-in as a kubelet would run it: the Deployment's command and
// arguments, its ServiceAccount's token and in-cluster configuration (no kubeconfig, no POD_NAMESPACE), its
// ConfigMaps and Secret mounted where it mounts them (the converter configuration at the previous default path, the
// audit log tenants, the maintenance windows, the Gardener kubeconfig), a read-only root and a non-root user. The
// landscape's objects the converter file names exist as on a landscape (the DNS credentials, the audit log tenant's
// Secret, the ACL ConfigMap); the ServiceAccount holds this operator's RBAC (config/default, bound to it), which
// the switch-over installs (docs/operations/migration.md). Only the Gardener project of the arguments and the
// converter file is the test garden's. The manager becomes ready, provisions a KEB-shaped Runtime to Ready with the
// converter file's settings in its shoot, and stops within the Deployment's grace period.
func TestMigrationPreviousDeploymentProvisionsIntegration(t *testing.T) {
	if err := node.Supported(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI must run the previous Deployment: %v", err)
		}
		t.Skipf("the previous Deployment needs the node stand-in: %v", err)
	}
	env := sharedEnv(t)
	ctx := context.Background()
	project := env.Catalogue.Project

	raw, err := os.ReadFile(filepath.Join(repoRoot, "operator", "cmd", "manager", "testdata", "previous-deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var d appsv1.Deployment
	if err := yaml.UnmarshalStrict(raw, &d); err != nil {
		t.Fatal(err)
	}
	spec := d.Spec.Template.Spec
	for i := range spec.Containers[0].Args {
		if strings.HasPrefix(spec.Containers[0].Args[i], "--gardener-project-name=") {
			spec.Containers[0].Args[i] = "--gardener-project-name=" + project
		}
	}

	// What the Deployment mounts, as a landscape holds it.
	converter := previousConverterFile(t, project)
	tenants := readTestdata(t, "audit-tenants.json")
	windows := readTestdata(t, "maintenance-windows.json")
	gardenKubeconfig, err := gardenbox.Kubeconfig(env.Garden, "garden")
	if err != nil {
		t.Fatal(err)
	}
	createOrReplace(t, env.KCPClient,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: kcpNamespace, Name: "infrastructure-manager-converter-config"},
			Data: map[string]string{"converter_config.json": string(converter)}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: kcpNamespace, Name: "audit-extension-config"},
			Data: map[string]string{"config": string(tenants)}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: kcpNamespace, Name: "maintenance-window-config"},
			Data: map[string]string{"config": string(windows)}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: kcpNamespace, Name: "gardener-credentials"},
			Data: map[string][]byte{"kubeconfig": gardenKubeconfig}},
		// The landscape objects the converter file names: the control plane's egress addresses (ACL) in KCP, the
		// DNS credentials and the eu-central-1 audit log tenant's Secret in the Gardener project.
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: kcpNamespace, Name: "kcp-egress-ips"},
			Data: map[string]string{"acl-list.json": `["192.0.2.0/24"]`, "kcp-external-nat-ip.json": `"198.51.100.7/32"`}},
	)
	createOrReplace(t, env.GardenClient,
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: env.Catalogue.ProjectNamespace(), Name: "route53-kyma-prod"},
			Data: map[string][]byte{"accessKeyID": []byte("AKIAEXAMPLE"), "secretAccessKey": []byte("example")}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: env.Catalogue.ProjectNamespace(), Name: "auditlog-credentials-eu10"},
			Data: map[string][]byte{"clientId": []byte("example"), "clientSecret": []byte("example")}},
	)
	allowTolerations(t, env, converter)
	bindOurRBAC(t, env, spec.ServiceAccountName)

	bin := filepath.Join(t.TempDir(), "manager")
	// Built as the other tests build it (sharing their compiled packages); the pod's root has the host's libraries
	// for the loader, where the image's binary is static.
	build := exec.Command("go", "build", "-o", bin, filepath.Join(repoRoot, "operator", "cmd", "manager"))
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the manager: %v\n%s", err, out)
	}
	pod, err := node.Start(ctx, env.KCP, node.Pod{Namespace: kcpNamespace, Name: d.Name + "-0", Spec: spec,
		Images: map[string]string{spec.Containers[0].Image: bin}})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = pod.Stop(time.Second)
		}
	}()
	testenv.Eventually(t, 2*time.Minute, "the previous Deployment's manager ready", func() (bool, string) {
		select {
		case <-pod.Exited():
			t.Fatalf("the manager exited: %v\n%s", pod.Err(), lastLines(pod.Logs(), 60))
		default:
		}
		if err := pod.Ready(ctx); err != nil {
			return false, err.Error()
		}
		return true, ""
	})

	id := "prev-deploy-0000-4000-8000-000000000001"
	shootName := "c-prevdep"
	rt := kebRuntime(t, "aws", id, shootName)
	if err := env.KCPClient.Create(ctx, rt); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.KCPClient.Delete(ctx, rt) }()
	func() {
		defer func() {
			if t.Failed() {
				t.Logf("the manager's last lines:\n%s", lastLines(pod.Logs(), 60))
			}
		}()
		waitRuntimeReady(t, env, id, 4*time.Minute)
	}()

	// The shoot carries what the converter file says (its DNS credentials and domain, its audit log tenant).
	s := &gardencorev1beta1.Shoot{}
	if err := env.GardenClient.Get(ctx, client.ObjectKey{Namespace: env.Catalogue.ProjectNamespace(), Name: shootName}, s); err != nil {
		t.Fatal(err)
	}
	//nolint:staticcheck // Providers: the shoot's one primary provider, as the operator writes it
	if s.Spec.DNS == nil || len(s.Spec.DNS.Providers) == 0 || s.Spec.DNS.Providers[0].CredentialsRef == nil ||
		s.Spec.DNS.Providers[0].CredentialsRef.Name != "route53-kyma-prod" || !strings.HasSuffix(ptrString(s.Spec.DNS.Domain), ".kyma-prod.example.com") {
		t.Errorf("shoot DNS %+v: want the converter file's provider secret route53-kyma-prod and domain prefix", s.Spec.DNS)
	}
	auditSecret := false
	for _, r := range s.Spec.Resources {
		auditSecret = auditSecret || r.ResourceRef.Name == "auditlog-credentials-eu10"
	}
	if !auditSecret {
		t.Errorf("shoot resources %+v: want the eu-central-1 tenant's Secret auditlog-credentials-eu10", s.Spec.Resources)
	}

	stopped = true
	grace := time.Duration(*d.Spec.Template.Spec.TerminationGracePeriodSeconds) * time.Second
	if err := pod.Stop(grace); err != nil {
		t.Errorf("the manager did not stop cleanly on SIGTERM: %v\n%s", err, lastLines(pod.Logs(), 40))
	}
}

// previousConverterFile is the previous converter configuration of the test data as the previous Deployment's
// ConfigMap holds it: the paths it names are the Deployment's mount paths; only the project is the test garden's.
func previousConverterFile(t *testing.T, project string) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(readTestdata(t, "converter_config.json"), &doc); err != nil {
		t.Fatal(err)
	}
	doc["converter"].(map[string]any)["gardener"].(map[string]any)["projectName"] = project
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "operator", "config", "testdata", "previous", name))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// allowTolerations adds the tolerations the converter file gives shoots to the Gardener project's allowlist, as the
// landscape's project has them: Gardener refuses a shoot with a toleration its project does not allow.
func allowTolerations(t *testing.T, env *testEnv, converter []byte) {
	t.Helper()
	var doc struct {
		Converter struct {
			Tolerations map[string][]gardencorev1beta1.Toleration `json:"tolerations"`
		} `json:"converter"`
	}
	if err := json.Unmarshal(converter, &doc); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p := &gardencorev1beta1.Project{}
	if err := env.GardenClient.Get(ctx, client.ObjectKey{Name: env.Catalogue.Project}, p); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(p.DeepCopy())
	if p.Spec.Tolerations == nil {
		p.Spec.Tolerations = &gardencorev1beta1.ProjectTolerations{}
	}
	for _, list := range doc.Converter.Tolerations {
		for _, tol := range list {
			if !slices.ContainsFunc(p.Spec.Tolerations.Whitelist, func(w gardencorev1beta1.Toleration) bool { return w.Key == tol.Key }) {
				p.Spec.Tolerations.Whitelist = append(p.Spec.Tolerations.Whitelist, gardencorev1beta1.Toleration{Key: tol.Key})
			}
		}
	}
	if err := env.GardenClient.Patch(ctx, p, patch); err != nil {
		t.Fatal(err)
	}
}

// bindOurRBAC gives the ServiceAccount sa in kcp-system this operator's permissions: every Role and ClusterRole of
// config/rbac that is bound to the manager's own ServiceAccount, bound to sa instead (under names of its own; the
// namespace "system" of config/rbac is the one config/default installs into).
func bindOurRBAC(t *testing.T, env *testEnv, sa string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "config", "rbac", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	roles := map[string]*unstructured.Unstructured{}
	var bindings []*unstructured.Unstructured
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(raw), "\n---\n") {
			o := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(doc), &o.Object); err != nil || o.Object == nil {
				continue
			}
			if o.GetNamespace() == "system" {
				o.SetNamespace(kcpNamespace)
			}
			switch o.GetKind() {
			case "Role", "ClusterRole":
				roles[o.GetKind()+"/"+o.GetName()] = o
			case "RoleBinding", "ClusterRoleBinding":
				bindings = append(bindings, o)
			}
		}
	}
	const prefix = "prev-deploy-"
	createOrReplace(t, env.KCPClient, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: kcpNamespace, Name: sa}})
	bound := 0
	for _, o := range bindings {
		var b rbacv1.ClusterRoleBinding // a RoleBinding has the same fields
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &b); err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(b.Subjects, func(s rbacv1.Subject) bool {
			return s.Kind == rbacv1.ServiceAccountKind && s.Name == "controller-manager"
		}) {
			continue
		}
		role, ok := roles[b.RoleRef.Kind+"/"+b.RoleRef.Name]
		if !ok {
			t.Fatalf("binding %s refers to %s %s, which config/rbac does not have", b.Name, b.RoleRef.Kind, b.RoleRef.Name)
		}
		r := role.DeepCopy()
		r.SetName(prefix + r.GetName())
		createOrReplace(t, env.KCPClient, r)
		subjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: kcpNamespace}}
		ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: b.RoleRef.Kind, Name: r.GetName()}
		if o.GetKind() == "RoleBinding" {
			createOrReplace(t, env.KCPClient, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: o.GetNamespace(), Name: prefix + b.Name},
				Subjects: subjects, RoleRef: ref})
		} else {
			createOrReplace(t, env.KCPClient, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: prefix + b.Name},
				Subjects: subjects, RoleRef: ref})
		}
		bound++
	}
	if bound == 0 {
		t.Fatal("config/rbac binds nothing to the manager's ServiceAccount controller-manager")
	}
}

// createOrReplace creates each object, or replaces what a previous run of the test left.
func createOrReplace(t *testing.T, c client.Client, objs ...client.Object) {
	t.Helper()
	ctx := context.Background()
	for _, o := range objs {
		err := c.Create(ctx, o)
		if apierrors.IsAlreadyExists(err) {
			current := o.DeepCopyObject().(client.Object)
			if err = c.Get(ctx, client.ObjectKeyFromObject(o), current); err == nil {
				o.SetResourceVersion(current.GetResourceVersion())
				err = c.Update(ctx, o)
			}
		}
		if err != nil {
			t.Fatalf("%T %s: %v", o, client.ObjectKeyFromObject(o), err)
		}
	}
}

func ptrString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
