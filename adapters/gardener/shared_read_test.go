package gardener

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/ports"
)

// TestReadOnlyPathsLeaveTheCachedShootAlone: the observation, the current state and the in-sync check read the
// cache's own shoot (no copy); for every golden runtime, a shoot in sync and one that drifted, none of them changes
// what the cache holds, and the in-sync check still tells the two apart.
func TestReadOnlyPathsLeaveTheCachedShootAlone(t *testing.T) {
	for name, a := range goldenApplies(t) {
		for _, drift := range []bool{false, true} {
			t.Run(name, func(t *testing.T) {
				ctx := context.Background()
				s := cached(t, serverShoot(t, a, true, drift))
				objs := []client.Object{s}
				if a.Spec.Authentication != nil {
					objs = append(objs, cached(t, authConfigMap(t, a, s, false)))
				}
				pristine := s.DeepCopy()
				cache := newMapClient(objs...)
				adapter := &Shoots{Client: cache, Live: cache, Namespace: s.Namespace, RuntimeNamespace: "kcp-system"}
				other := a
				other.Spec.Workers = append([]shoot.WorkerSpec(nil), a.Spec.Workers...)
				other.Spec.Workers[0].Maximum++
				var got []any
				for _, read := range []func() (any, error){
					func() (any, error) { return adapter.Get(ctx, a.Spec.Name, ports.ReadCached) },
					func() (any, error) { return adapter.Current(ctx, a.Spec.Name) },
					func() (any, error) { return adapter.InSync(ctx, a) },
					func() (any, error) { return adapter.InSync(ctx, other) },
				} {
					v, err := read()
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, v)
				}
				if diff := cmp.Diff(pristine, s); diff != "" {
					t.Fatalf("a read-only path changed the cached shoot (-before +after):\n%s", diff)
				}
				if got[2].(ports.SyncCheck).InSync == drift || got[3].(ports.SyncCheck).InSync {
					t.Errorf("in sync: %+v (drift %v), with another spec %+v", got[2], drift, got[3])
				}
			})
		}
	}
}
