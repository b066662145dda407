package fake

import (
	"context"
	"maps"
	"sync"
	"time"

	"github.com/kyma-project/kim/core/ports"
)

// AccessObjects is an in-memory ports.AccessObjects. SetKubeconfig plays the GardenerCluster controller.
type AccessObjects struct {
	mu       sync.Mutex
	clusters map[string]ports.GardenerClusterSpec
	secrets  map[string]time.Time // kubeconfig Secret -> expiry
	// Err, when set, is consulted first by every method (by name); a non-nil error is returned as is.
	Err func(method string) error
}

// NewAccessObjects returns an empty store.
func NewAccessObjects() *AccessObjects {
	return &AccessObjects{clusters: map[string]ports.GardenerClusterSpec{}, secrets: map[string]time.Time{}}
}

var _ ports.AccessObjects = (*AccessObjects)(nil)

func (a *AccessObjects) fail(method string) error {
	if a.Err != nil {
		return a.Err(method)
	}
	return nil
}

// InSync implements ports.AccessObjects.
func (a *AccessObjects) InSync(_ context.Context, spec ports.GardenerClusterSpec) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.fail("InSync"); err != nil {
		return false, err
	}
	got, ok := a.clusters[spec.Namespace+"/"+spec.RuntimeID]
	if !ok || got.ShootName != spec.ShootName || got.SecretName != spec.SecretName || got.SecretKey != spec.SecretKey ||
		(spec.SKRDomain != "" && got.SKRDomain != spec.SKRDomain) {
		return false, nil
	}
	for k, v := range spec.Labels { // labels others added (KEB) are no drift
		if cur, ok := got.Labels[k]; !ok || cur != v {
			return false, nil
		}
	}
	return true, nil
}

// Ensure implements ports.AccessObjects.
func (a *AccessObjects) Ensure(_ context.Context, spec ports.GardenerClusterSpec) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.fail("Ensure"); err != nil {
		return err
	}
	key := spec.Namespace + "/" + spec.RuntimeID
	labels := map[string]string{}
	old, exists := a.clusters[key]
	if exists {
		labels = old.Labels // labels set by others are kept unless spec sets them
		if spec.SKRDomain == "" {
			spec.SKRDomain = old.SKRDomain
		}
	}
	maps.Copy(labels, spec.Labels)
	if !exists {
		for k, v := range spec.InitialLabels {
			if _, set := labels[k]; !set {
				labels[k] = v
			}
		}
	}
	spec.Labels = labels
	a.clusters[key] = spec
	return nil
}

// AddLabel sets a label on a runtime's GardenerCluster as someone else (KEB) would.
func (a *AccessObjects) AddLabel(namespace, runtimeID, key, value string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if gc, ok := a.clusters[namespace+"/"+runtimeID]; ok {
		gc.Labels = maps.Clone(gc.Labels)
		gc.Labels[key] = value
		a.clusters[namespace+"/"+runtimeID] = gc
	}
}

// KubeconfigReady implements ports.AccessObjects.
func (a *AccessObjects) KubeconfigReady(_ context.Context, namespace, runtimeID string, now time.Time) (ports.KubeconfigState, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.fail("KubeconfigReady"); err != nil {
		return ports.KubeconfigMissing, err
	}
	expires, ok := a.secrets[namespace+"/"+runtimeID]
	switch {
	case !ok:
		return ports.KubeconfigMissing, nil
	case expires.IsZero():
		return ports.KubeconfigUnrecorded, nil
	case now.Before(expires):
		return ports.KubeconfigValid, nil
	}
	return ports.KubeconfigMissing, nil
}

// Remove implements ports.AccessObjects; memory forgets at once, so the first call already reports gone.
func (a *AccessObjects) Remove(_ context.Context, namespace, runtimeID string) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.fail("Remove"); err != nil {
		return false, err
	}
	delete(a.clusters, namespace+"/"+runtimeID)
	delete(a.secrets, namespace+"/"+runtimeID)
	return true, nil
}

// SetKubeconfig plays the GardenerCluster controller writing the kubeconfig Secret of a runtime (valid for ages).
func (a *AccessObjects) SetKubeconfig(namespace, runtimeID string) {
	a.SetKubeconfigExpiring(namespace, runtimeID, time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC))
}

// SetKubeconfigExpiring plays the GardenerCluster controller writing a kubeconfig that expires at expires; the zero
// time plays the previous infrastructure manager's Secret, which records no expiry.
func (a *AccessObjects) SetKubeconfigExpiring(namespace, runtimeID string, expires time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.secrets[namespace+"/"+runtimeID] = expires
}

// GardenerCluster returns the stored GardenerCluster of a runtime.
func (a *AccessObjects) GardenerCluster(namespace, runtimeID string) (ports.GardenerClusterSpec, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.clusters[namespace+"/"+runtimeID]
	return s, ok
}
