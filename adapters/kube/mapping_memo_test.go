package kube

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// countingMapper counts the RESTMapping questions that reach it and knows only what known holds.
type countingMapper struct {
	meta.RESTMapper
	known *meta.DefaultRESTMapper
	asked int
}

func (c *countingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	c.asked++
	return c.known.RESTMapping(gk, versions...)
}

// TestMappingMemoAsksOncePerKindAndVersion: the caches ask for the same mapping on every read; the memo asks the
// dynamic mapper once, keeps asking for kinds it does not know (they may be served later), and its answers are
// copies a caller cannot spoil for the next one.
func TestMappingMemoAsksOncePerKindAndVersion(t *testing.T) {
	runtimeGVK := schema.GroupVersionKind{Group: "infrastructuremanager.kyma-project.io", Version: "v1", Kind: "Runtime"}
	known := meta.NewDefaultRESTMapper(nil)
	known.Add(runtimeGVK, meta.RESTScopeNamespace)
	next := &countingMapper{known: known}
	memo := newMappingMemo(next)
	for range 100 {
		m, err := memo.RESTMapping(runtimeGVK.GroupKind(), runtimeGVK.Version)
		if err != nil {
			t.Fatal(err)
		}
		if m.Scope.Name() != meta.RESTScopeNameNamespace || m.Resource.Resource != "runtimes" {
			t.Fatalf("mapping %+v, want the namespaced resource runtimes", m)
		}
		m.Resource.Resource = "spoiled"
	}
	if next.asked != 1 {
		t.Errorf("the wrapped mapper was asked %d times for one kind and version, want 1", next.asked)
	}
	if _, err := memo.RESTMapping(runtimeGVK.GroupKind(), "v2"); err == nil {
		t.Fatal("an unserved version was mapped")
	}
	later := schema.GroupVersionKind{Group: "example.io", Version: "v1", Kind: "Later"}
	var noMatch *meta.NoKindMatchError
	if _, err := memo.RESTMapping(later.GroupKind(), later.Version); !errors.As(err, &noMatch) {
		t.Fatalf("unknown kind: %v, want the wrapped mapper's NoKindMatchError", err)
	}
	known.Add(later, meta.RESTScopeRoot) // served now (a CRD installed)
	if m, err := memo.RESTMapping(later.GroupKind(), later.Version); err != nil || m.Scope.Name() != meta.RESTScopeNameRoot {
		t.Fatalf("a kind served after a failed mapping: %v, %v; want it mapped", m, err)
	}
	if next.asked != 4 {
		t.Errorf("the wrapped mapper was asked %d times, want 4 (one success kept, failures asked again)", next.asked)
	}
}
