// Package keb holds the fixtures shaped as the Kyma Environment Broker sends them (docs/keb-contract.md): its
// GardenerClusters and Runtimes. It imports only the public API, so every test can use it, the controllers' own
// unit tests included.
package keb

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"golang.org/x/mod/modfile"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// Namespace is where KEB creates Runtimes and GardenerClusters.
const Namespace = "kcp-system"

// RepoRoot is the repository's root directory, so tests run from any package: found from this file's path, or,
// when the binary was built with -trimpath (make test builds so), from the working directory up to the directory
// whose go.mod declares this module.
func RepoRoot() string {
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		return filepath.Join(filepath.Dir(file), "..", "..", "..")
	}
	wd, err := os.Getwd()
	if err == nil {
		var root string
		if root, err = rootFrom(wd); err == nil {
			return root
		}
	}
	panic(fmt.Sprintf("the repository root: %v", err))
}

// rootFrom is dir or the nearest directory above it whose go.mod declares the root module.
func rootFrom(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		if mod, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && modfile.ModulePath(mod) == rootModule {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no directory from %s up holds the go.mod of %s", dir, rootModule)
		}
	}
}

// rootModule is the module path of the repository's root module.
const rootModule = "github.com/kyma-project/kim"

// GardenerCluster is a GardenerCluster the way KEB creates it: KEB's labels (managed-by lifecycle-manager), the
// skr-domain annotation, the Secret kubeconfig-<runtimeID>, no finalizer.
func GardenerCluster(runtimeID, shoot string) *imv1.GardenerCluster {
	return &imv1.GardenerCluster{
		ObjectMeta: metav1.ObjectMeta{
			Name: runtimeID, Namespace: Namespace,
			Labels: map[string]string{
				imv1.LabelInstanceID: "instance-" + shoot, imv1.LabelRuntimeID: runtimeID,
				imv1.LabelBrokerPlanID: "7d55d31d-35ae-4438-bf13-6ffdfa107d9f", imv1.LabelBrokerPlanName: "trial",
				imv1.LabelGlobalAccountID: "ga-1", imv1.LabelSubaccountID: "sa-" + shoot, imv1.LabelShootName: shoot,
				imv1.LabelRegion: "eu-central-1", imv1.LabelKymaName: runtimeID, imv1.LabelManagedBy: "lifecycle-manager",
			},
			Annotations: map[string]string{imv1.AnnotationSKRDomain: shoot + ".kyma.example"},
		},
		Spec: imv1.GardenerClusterSpec{
			Shoot:      imv1.Shoot{Name: shoot},
			Kubeconfig: imv1.Kubeconfig{Secret: imv1.Secret{Name: "kubeconfig-" + runtimeID, Namespace: Namespace, Key: "config"}},
		},
	}
}

// LoadRuntime reads a Runtime as KEB sends it (strictly: unknown fields fail), in KEB's namespace.
func LoadRuntime(t testing.TB, path string) *imv1.Runtime {
	t.Helper()
	rt, err := ReadRuntime(path)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// ReadRuntime is LoadRuntime for programs (the load harnesses).
func ReadRuntime(path string) (*imv1.Runtime, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	rt := &imv1.Runtime{}
	if err := yaml.UnmarshalStrict(raw, rt); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	rt.Generation = 0
	rt.Namespace = Namespace
	return rt, nil
}

// GoldenRuntimePath is adapters/gardener/testdata/runtimes/<name>.yaml, a Runtime the golden shoots are made of.
func GoldenRuntimePath(name string) string {
	return filepath.Join(RepoRoot(), "adapters", "gardener", "testdata", "runtimes", name+".yaml")
}

// GoldenRuntime loads GoldenRuntimePath(name).
func GoldenRuntime(t testing.TB, name string) *imv1.Runtime {
	return LoadRuntime(t, GoldenRuntimePath(name))
}

// WithIdentity returns a copy of rt with another runtime ID and shoot name (empty: kept), as KEB would send for
// another instance.
func WithIdentity(rt *imv1.Runtime, runtimeID, shootName string) *imv1.Runtime {
	out := rt.DeepCopy()
	out.Name = runtimeID
	out.Labels = map[string]string{}
	for k, v := range rt.Labels {
		out.Labels[k] = v
	}
	out.Labels[imv1.LabelRuntimeID] = runtimeID
	out.Labels[imv1.LabelKymaName] = runtimeID
	if shootName != "" {
		out.Spec.Shoot.Name = shootName
		out.Labels[imv1.LabelShootName] = shootName
	}
	return out
}

// RuntimeID is the i-th runtime ID of a load test (UUID-shaped, distinct per i).
func RuntimeID(i int) string { return fmt.Sprintf("5e1d0c2a-be4c-4000-8000-%012x", i) }

// ShootName is the i-th shoot name of a load test.
func ShootName(i int) string { return fmt.Sprintf("c-%06x", i) }
