package fake_test

import (
	"context"
	"testing"

	"github.com/kyma-project/kim/adapters/contract"
	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/domain/runtimeconfig"
)

func TestRuntimeConfiguratorContract(t *testing.T) {
	contract.RunRuntimeConfiguratorContract(t, func(t *testing.T, o contract.FixtureOptions) contract.RuntimeConfiguratorFixture {
		c := fake.NewRuntimeConfigurator()
		c.ServeOIDCByDefault = o.ServeOIDC
		c.SetUnreachable("rt-unreachable", true)
		return contract.RuntimeConfiguratorFixture{Configurator: c, RuntimeID: "rt-1", Inside: fakeInside{c, "rt-1"},
			Unreachable: "rt-unreachable"}
	})
}

// fakeInside acts on one in-memory runtime.
type fakeInside struct {
	c  *fake.RuntimeConfigurator
	id string
}

func (f fakeInside) Namespace(_ context.Context, name string) (bool, error) {
	return f.c.Namespace(f.id, name), nil
}

func (f fakeInside) ConfigMap(_ context.Context, ns, name string) (map[string]string, map[string]string, bool, error) {
	data, labels, found := f.c.ConfigMap(f.id, ns, name)
	return data, labels, found, nil
}

func (f fakeInside) DeleteConfigMap(_ context.Context, ns, name string) error {
	f.c.DeleteConfigMap(f.id, ns, name)
	return nil
}

func (f fakeInside) OIDC(context.Context) ([]runtimeconfig.ObservedOIDC, error) {
	return f.c.OIDC(f.id), nil
}

func (f fakeInside) PutOIDC(_ context.Context, o runtimeconfig.ObservedOIDC) error {
	f.c.PutOIDC(f.id, o)
	return nil
}

func (f fakeInside) DeleteOIDC(_ context.Context, name string) error {
	f.c.DeleteOIDC(f.id, name)
	return nil
}

func (f fakeInside) Bindings(context.Context) ([]runtimeconfig.ObservedBinding, error) {
	return f.c.Bindings(f.id), nil
}

func (f fakeInside) PutBinding(_ context.Context, b runtimeconfig.ObservedBinding) error {
	f.c.PutBinding(f.id, b)
	return nil
}

func (f fakeInside) DeleteBinding(_ context.Context, name string) error {
	f.c.DeleteBinding(f.id, name)
	return nil
}

func (f fakeInside) BootstrapObject(_ context.Context, kind, ns, name string) (bool, error) {
	return f.c.BootstrapObject(f.id, kind, ns, name), nil
}

func (f fakeInside) PullSecret(_ context.Context, ns, name string) (bool, error) {
	return f.c.PullSecret(f.id, ns, name), nil
}

func (f fakeInside) ReplaceBootstrapObject(_ context.Context, kind, ns, name string) error {
	f.c.ReplaceBootstrapObject(f.id, kind, ns, name)
	return nil
}

func (f fakeInside) SetDeploymentAvailable(_ context.Context, ns, name string) error {
	f.c.SetDeploymentAvailable(f.id, ns, name)
	return nil
}

func (f fakeInside) Hang(context.Context) (func(), error) {
	f.c.SetUnreachable(f.id, true)
	return func() { f.c.SetUnreachable(f.id, false) }, nil
}
