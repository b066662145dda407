package manifests_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim/operator/manifests"
	"github.com/kyma-project/kim/test/testenv/tools"
)

// installerImage is the manager image the test renders the installer with; no kustomization names it.
const installerImage = "registry.example/kim-installer:9.9.9"

// renderInstaller runs what `make build-installer` runs (hack/deploy.sh render with the real kubectl) and parses the
// documents of the file it writes.
func renderInstaller(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	kubectl := tools.Require(t, "kubectl", "make build-installer runs it")
	if _, err := os.ReadFile(repoPath("hack", "deploy.sh")); err != nil { // so go test's cache notices a changed script
		t.Fatal(err)
	}
	cmd := exec.Command(repoPath("hack", "deploy.sh"), "render", installerImage)
	cmd.Env = append(os.Environ(), "KUBECTL="+kubectl)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hack/deploy.sh render: %v\n%s", err, stderr.String())
	}
	return parseDocuments(t, out)
}

func parseDocuments(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []*unstructured.Unstructured
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			t.Fatalf("a document of the installer: %v\n%s", err, doc)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
	return objs
}

func objectKey(o *unstructured.Unstructured) string {
	return o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
}

// TestInstallerHasEverythingDeployInstalls: dist/install.yaml (make build-installer) holds every object of
// config/default and config/admission, what `make deploy` applies; every generated CRD; the Deployment with the given
// image; the generated manager Role bound to the Deployment's ServiceAccount; and no Namespace (kcp-system is KEB's).
func TestInstallerHasEverythingDeployInstalls(t *testing.T) {
	objs := renderInstaller(t)
	byKey := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		if o.GetKind() == "Namespace" {
			t.Errorf("the installer contains the Namespace %s; kcp-system belongs to KEB", o.GetName())
		}
		byKey[objectKey(o)] = o
	}

	// Everything deploy applies: the two kustomizations hack/deploy.sh puts into its overlay.
	for _, dir := range []string{"default", "admission"} {
		want, err := manifests.Render(repoPath("config", dir))
		if err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 {
			t.Fatalf("config/%s renders nothing", dir)
		}
		for _, o := range want {
			if byKey[objectKey(o)] == nil {
				t.Errorf("the installer lacks %s of config/%s", objectKey(o), dir)
			}
		}
	}

	// Every CRD the generator writes.
	crdFiles, err := filepath.Glob(repoPath("config", "crd", "bases", "*.yaml"))
	if err != nil || len(crdFiles) == 0 {
		t.Fatalf("no generated CRDs: %v", err)
	}
	for _, f := range crdFiles {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd struct {
			Metadata struct{ Name string } `json:"metadata"`
		}
		if err := yaml.Unmarshal(data, &crd); err != nil {
			t.Fatal(err)
		}
		if byKey["CustomResourceDefinition /"+crd.Metadata.Name] == nil {
			t.Errorf("the installer lacks the CRD %s (%s)", crd.Metadata.Name, filepath.Base(f))
		}
	}

	// The Deployment runs the given image.
	depObj := byKey["Deployment "+kcpNamespace+"/kim-controller-manager"]
	if depObj == nil {
		t.Fatalf("the installer has no Deployment %s/kim-controller-manager", kcpNamespace)
	}
	dep := &appsv1.Deployment{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(depObj.Object, dep); err != nil {
		t.Fatal(err)
	}
	var images []string
	for _, c := range dep.Spec.Template.Spec.Containers {
		images = append(images, c.Image)
		if c.Name == "manager" && c.Image != installerImage {
			t.Errorf("the manager container runs %s, want %s", c.Image, installerImage)
		}
	}
	if !slices.Contains(images, installerImage) {
		t.Errorf("the Deployment's containers run %v, none the given image %s", images, installerImage)
	}

	// The generated manager Role, with the generator's rules, bound to the Deployment's ServiceAccount.
	data, err := os.ReadFile(repoPath("config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	generated := &rbacv1.Role{}
	if err := yaml.Unmarshal(data, generated); err != nil {
		t.Fatal(err)
	}
	roleObj := byKey["Role "+kcpNamespace+"/kim-"+generated.Name]
	if roleObj == nil {
		t.Fatalf("the installer has no Role %s/kim-%s", kcpNamespace, generated.Name)
	}
	role := &rbacv1.Role{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(roleObj.Object, role); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(generated.Rules, role.Rules); diff != "" {
		t.Errorf("the installer's manager Role differs from config/rbac/role.yaml (-generated +installer):\n%s", diff)
	}
	sa := dep.Spec.Template.Spec.ServiceAccountName
	if byKey["ServiceAccount "+kcpNamespace+"/"+sa] == nil {
		t.Errorf("the installer lacks the Deployment's ServiceAccount %s/%s", kcpNamespace, sa)
	}
	bound := false
	for _, o := range objs {
		if o.GetKind() != "RoleBinding" || o.GetNamespace() != kcpNamespace {
			continue
		}
		b := &rbacv1.RoleBinding{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, b); err != nil {
			t.Fatal(err)
		}
		if b.RoleRef.Kind != "Role" || b.RoleRef.Name != role.Name {
			continue
		}
		for _, s := range b.Subjects {
			if s.Kind == rbacv1.ServiceAccountKind && s.Name == sa && s.Namespace == kcpNamespace {
				bound = true
			}
		}
	}
	if !bound {
		t.Errorf("no RoleBinding of the installer binds the Role %s to the ServiceAccount %s/%s", role.Name, kcpNamespace, sa)
	}
}

// buildInstallerRecipe is the recipe of the Makefile's build-installer target.
var buildInstallerRecipe = regexp.MustCompile(`(?m)^build-installer:.*\n((?:\t.*\n)+)`)

// TestBuildInstallerRendersWhatDeployApplies: `make build-installer` writes dist/install.yaml with the same script
// and image as `make deploy`, so the test above covers the file a release attaches.
func TestBuildInstallerRendersWhatDeployApplies(t *testing.T) {
	data, err := os.ReadFile(repoPath("Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := buildInstallerRecipe.FindSubmatch(data)
	if m == nil {
		t.Fatal("the Makefile has no build-installer target")
	}
	recipe := string(m[1])
	for _, want := range []string{"hack/deploy.sh render $(IMG)", "dist/install.yaml"} {
		if !strings.Contains(recipe, want) {
			t.Errorf("build-installer's recipe does not contain %q:\n%s", want, recipe)
		}
	}
}
