package contract

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kyma-project/kim/core/domain/runtimeconfig"
	"github.com/kyma-project/kim/core/ports"
)

// RolloutFixture is one fresh KCP behind a RuntimeBootstrapLister.
type RolloutFixture struct {
	Lister ports.RuntimeBootstrapLister
	// Put creates or changes a Runtime so that it records rec (its status, as the Runtime controller writes it; a
	// deletion timestamp for Deleting). Delete removes the Runtime.
	Put    func(t *testing.T, rec ports.RuntimeBootstrap)
	Delete func(t *testing.T, namespace, runtimeID string)
}

// RunRuntimeBootstrapListerContract runs the RuntimeBootstrapLister contract against fixtures made by newFixture.
// Reads may lag behind writes (a cache), so results are awaited.
func RunRuntimeBootstrapListerContract(t *testing.T, newFixture func(t *testing.T) RolloutFixture) {
	list := func(c require.TestingT, f RolloutFixture) []ports.RuntimeBootstrap {
		got, err := f.Lister.ListBootstrap(t.Context())
		require.NoError(c, err)
		slices.SortFunc(got, func(a, b ports.RuntimeBootstrap) int {
			return strings.Compare(a.Namespace+"/"+a.RuntimeID, b.Namespace+"/"+b.RuntimeID)
		})
		return got
	}
	t.Run("no Runtimes: an empty list, no error", func(t *testing.T) {
		require.Empty(t, list(t, newFixture(t)))
	})
	t.Run("every Runtime is listed with what it records, changes and deletions are seen", func(t *testing.T) {
		f := newFixture(t)
		fresh := ports.RuntimeBootstrap{Namespace: "kcp-system", RuntimeID: "rt-fresh", ShootName: "c-fresh"}
		reached := ports.RuntimeBootstrap{Namespace: "kcp-system", RuntimeID: "rt-reached", ShootName: "c-reached",
			Bootstrap: runtimeconfig.BootstrapRecord{Hash: "h1"}, EverReady: true}
		failed := ports.RuntimeBootstrap{Namespace: "kcp-system", RuntimeID: "rt-failed", ShootName: "c-failed",
			Bootstrap: runtimeconfig.BootstrapRecord{Hash: "h1", Failed: true}, EverReady: true, GaveUp: true}
		deleting := ports.RuntimeBootstrap{Namespace: "kcp-system", RuntimeID: "rt-deleting", ShootName: "c-deleting", EverReady: true,
			Deleting: true}
		for _, rec := range []ports.RuntimeBootstrap{fresh, reached, failed, deleting} {
			f.Put(t, rec)
		}
		eventually(t, "all four listed as recorded", func(c *assert.CollectT) {
			assert.Equal(c, []ports.RuntimeBootstrap{deleting, failed, fresh, reached}, list(c, f))
		})
		reached.Bootstrap = runtimeconfig.BootstrapRecord{Hash: "h2", Failed: true}
		f.Put(t, reached)
		f.Delete(t, "kcp-system", "rt-fresh")
		eventually(t, "the change and the deletion seen", func(c *assert.CollectT) {
			assert.Equal(c, []ports.RuntimeBootstrap{deleting, failed, reached}, list(c, f))
		})
	})
}
