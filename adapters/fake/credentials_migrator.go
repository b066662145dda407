package fake

import (
	"context"
	"fmt"
	"sync"

	"github.com/kyma-project/kim/core/ports"
)

// CredentialsMigrator is an in-memory ports.CredentialsMigrator over shoots that only know their bindings.
type CredentialsMigrator struct {
	mu     sync.Mutex
	shoots map[string]*bindingShoot
	// Credentials maps binding names (SecretBindings and CredentialsBindings) to the credentials they reference.
	Credentials map[string]string
}

type bindingShoot struct {
	secretBinding, credentialsBinding string
	managed                           bool
}

var _ ports.CredentialsMigrator = (*CredentialsMigrator)(nil)

// NewCredentialsMigrator returns an empty garden.
func NewCredentialsMigrator() *CredentialsMigrator {
	return &CredentialsMigrator{shoots: map[string]*bindingShoot{}, Credentials: map[string]string{}}
}

// Put stores a shoot with the given bindings.
func (m *CredentialsMigrator) Put(name, secretBinding, credentialsBinding string, managed bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.shoots[name] = &bindingShoot{secretBinding: secretBinding, credentialsBinding: credentialsBinding, managed: managed}
}

// Bindings returns a shoot's bindings.
func (m *CredentialsMigrator) Bindings(name string) (secretBinding, credentialsBinding string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.shoots[name]; s != nil {
		return s.secretBinding, s.credentialsBinding
	}
	return "", ""
}

// MigrateToCredentialsBinding implements ports.CredentialsMigrator.
func (m *CredentialsMigrator) MigrateToCredentialsBinding(_ context.Context, name, binding string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.shoots[name]
	switch {
	case s == nil:
		return false, fmt.Errorf("shoot %s: %w", name, ports.ErrShootNotFound)
	case !s.managed:
		return false, fmt.Errorf("shoot %s: %w", name, ports.ErrShootNotManaged)
	case s.secretBinding == "":
		return false, nil
	case m.Credentials[s.secretBinding] != m.Credentials[binding]:
		return false, fmt.Errorf("shoot %s: binding %s references other credentials: %w", name, binding, ports.ErrShootRejected)
	}
	s.secretBinding, s.credentialsBinding = "", binding
	return true, nil
}
