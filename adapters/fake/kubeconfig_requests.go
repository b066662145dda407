package fake

import (
	"context"
	"maps"
	"sync"

	"github.com/kyma-project/kim/core/ports"
)

// GardenerClusters is an in-memory ports.KubeconfigRequests: the GardenerClusters of a KCP as the API server has
// them. Safe for concurrent use.
type GardenerClusters struct {
	mu       sync.Mutex
	clusters map[string]ports.KubeconfigRequest
}

// NewGardenerClusters returns a KCP without GardenerClusters.
func NewGardenerClusters() *GardenerClusters {
	return &GardenerClusters{clusters: map[string]ports.KubeconfigRequest{}}
}

var _ ports.KubeconfigRequests = (*GardenerClusters)(nil)

// Put creates or replaces a GardenerCluster.
func (g *GardenerClusters) Put(req ports.KubeconfigRequest) {
	g.mu.Lock()
	defer g.mu.Unlock()
	req.Labels = maps.Clone(req.Labels)
	g.clusters[req.Namespace+"/"+req.Name] = req
}

// Delete begins the deletion of a GardenerCluster (a finalizer keeps it).
func (g *GardenerClusters) Delete(namespace, name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if req, ok := g.clusters[namespace+"/"+name]; ok {
		req.Deleting = true
		g.clusters[namespace+"/"+name] = req
	}
}

// Confirm implements ports.KubeconfigRequests.
func (g *GardenerClusters) Confirm(_ context.Context, namespace, name string) (ports.KubeconfigRequest, bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	req, ok := g.clusters[namespace+"/"+name]
	req.Labels = maps.Clone(req.Labels)
	return req, ok, nil
}
