package fake

import (
	"context"
	"fmt"
	"maps"
	"slices"
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
	if old, ok := a.clusters[key]; ok {
		labels = old.Labels // labels set by others are kept unless spec sets them
		if spec.SKRDomain == "" {
			spec.SKRDomain = old.SKRDomain
		}
	}
	maps.Copy(labels, spec.Labels)
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
func (a *AccessObjects) KubeconfigReady(_ context.Context, namespace, runtimeID string, now time.Time) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.fail("KubeconfigReady"); err != nil {
		return false, err
	}
	expires, ok := a.secrets[namespace+"/"+runtimeID]
	return ok && now.Before(expires), nil
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

// SetKubeconfigExpiring plays the GardenerCluster controller writing a kubeconfig that expires at expires.
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

// RuntimeConfigurator is an in-memory ports.RuntimeConfigurator: per runtime, the users bound to cluster-admin by
// the operator and those bound by hand (never touched).
type RuntimeConfigurator struct {
	mu          sync.Mutex
	managed     map[string][]string
	manual      map[string][]string
	unreachable map[string]bool
	// Err, when set, is returned by Configure.
	Err func(cfg ports.RuntimeConfig) error
}

// NewRuntimeConfigurator returns a configurator with no runtimes.
func NewRuntimeConfigurator() *RuntimeConfigurator {
	return &RuntimeConfigurator{managed: map[string][]string{}, manual: map[string][]string{}, unreachable: map[string]bool{}}
}

var _ ports.RuntimeConfigurator = (*RuntimeConfigurator)(nil)

// Configure implements ports.RuntimeConfigurator.
func (r *RuntimeConfigurator) Configure(_ context.Context, cfg ports.RuntimeConfig) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.Err != nil {
		if err := r.Err(cfg); err != nil {
			return err
		}
	}
	if r.unreachable[cfg.RuntimeID] {
		return fmt.Errorf("configure runtime %s: no kubeconfig: %w", cfg.RuntimeID, ports.ErrRuntimeUnreachable)
	}
	admins := slices.Clone(cfg.Administrators)
	slices.Sort(admins)
	r.managed[cfg.RuntimeID] = slices.Compact(admins)
	return nil
}

// MakeUnreachable makes Configure of a runtime fail as when its kubeconfig Secret is missing.
func (r *RuntimeConfigurator) MakeUnreachable(runtimeID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.unreachable[runtimeID] = true
}

// AddManual records a binding created by hand in a runtime.
func (r *RuntimeConfigurator) AddManual(runtimeID, user string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.manual[runtimeID] = append(r.manual[runtimeID], user)
}

// Admins returns every user bound to cluster-admin in a runtime (managed and manual), sorted.
func (r *RuntimeConfigurator) Admins(runtimeID string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append(slices.Clone(r.managed[runtimeID]), r.manual[runtimeID]...)
	slices.Sort(out)
	return slices.Compact(out)
}
