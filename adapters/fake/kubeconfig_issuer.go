package fake

import (
	"context"
	"encoding/base64"
	"fmt"
	"sync"
	"time"

	"github.com/kyma-project/kim/core/ports"
)

// KubeconfigIssuer is an in-memory ports.KubeconfigIssuer. Shoots are registered with AddShoot; a shoot can be
// made to fail with one of the ports errors. Issued kubeconfigs are distinct, well-formed kubeconfig files.
type KubeconfigIssuer struct {
	clock ports.Clock
	// MaxValidity caps the validity like Gardener's --shoot-admin-kubeconfig-max-expiration (0: no cap).
	MaxValidity time.Duration

	mu     sync.Mutex
	shoots map[string]error
	calls  map[string]int
	serial int
}

var _ ports.KubeconfigIssuer = (*KubeconfigIssuer)(nil)

// NewKubeconfigIssuer returns an issuer without shoots that reads time from clock.
func NewKubeconfigIssuer(clock ports.Clock) *KubeconfigIssuer {
	return &KubeconfigIssuer{clock: clock, shoots: map[string]error{}, calls: map[string]int{}}
}

// AddShoot registers a ready shoot.
func (f *KubeconfigIssuer) AddShoot(name string) { f.SetShootError(name, nil) }

// SetShootError makes requests for the shoot fail with err (wrap a ports error); nil makes the shoot ready.
func (f *KubeconfigIssuer) SetShootError(name string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.shoots[name] = err
}

// RemoveShoot forgets the shoot: requests fail with ports.ErrShootNotFound.
func (f *KubeconfigIssuer) RemoveShoot(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.shoots, name)
}

// Calls returns how many kubeconfigs were requested for the shoot (successful or not).
func (f *KubeconfigIssuer) Calls(shoot string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[shoot]
}

// TotalCalls returns how many kubeconfigs were requested in all.
func (f *KubeconfigIssuer) TotalCalls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		n += c
	}
	return n
}

// IssueAdminKubeconfig implements ports.KubeconfigIssuer.
func (f *KubeconfigIssuer) IssueAdminKubeconfig(ctx context.Context, shootName string, validity time.Duration) (ports.IssuedKubeconfig, error) {
	if err := ctx.Err(); err != nil {
		return ports.IssuedKubeconfig{}, fmt.Errorf("issue kubeconfig for shoot %s: %w: %w", shootName, ports.ErrTransient, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[shootName]++
	shootErr, ok := f.shoots[shootName]
	switch {
	case !ok:
		return ports.IssuedKubeconfig{}, fmt.Errorf("issue kubeconfig for shoot %s: %w", shootName, ports.ErrShootNotFound)
	case shootErr != nil:
		return ports.IssuedKubeconfig{}, fmt.Errorf("issue kubeconfig for shoot %s: %w", shootName, shootErr)
	case validity <= 0:
		return ports.IssuedKubeconfig{}, fmt.Errorf("issue kubeconfig for shoot %s: validity %s must be positive", shootName, validity)
	}
	if f.MaxValidity > 0 && validity > f.MaxValidity {
		validity = f.MaxValidity
	}
	f.serial++
	// Gardener's expiry has seconds precision.
	expires := f.clock.Now().Add(validity).Truncate(time.Second)
	return ports.IssuedKubeconfig{Kubeconfig: fakeKubeconfig(shootName, f.serial), ExpiresAt: expires}, nil
}

func fakeKubeconfig(shoot string, serial int) []byte {
	ca := base64.StdEncoding.EncodeToString([]byte("fake CA of " + shoot))
	token := fmt.Sprintf("fake-token-%s-%d", shoot, serial)
	return fmt.Appendf(nil, `apiVersion: v1
kind: Config
current-context: %[1]s
clusters:
- name: %[1]s
  cluster:
    certificate-authority-data: %[2]s
    server: https://api.%[1]s.fake.example
contexts:
- name: %[1]s
  context:
    cluster: %[1]s
    user: %[1]s
users:
- name: %[1]s
  user:
    token: %[3]s
`, shoot, ca, token)
}
