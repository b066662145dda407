package fake_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/kyma-project/kim/adapters/contract"
	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/domain/auditlog"
	"github.com/kyma-project/kim/core/domain/registrycache"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/ports"
)

func TestAuditLogPoolContract(t *testing.T) {
	contract.RunAuditLogPoolContract(t, func(t *testing.T) contract.AuditLogPoolFixture {
		p := fake.NewAuditLogPool()
		return contract.AuditLogPoolFixture{Pool: p, Add: func(_ context.Context, name string) (string, error) {
			p.Put(auditlog.Tenant{Name: name, State: auditlog.StateSiemApproved, Regions: []string{"eu-central-1", "eu-west-1"},
				TenantID: "sub-" + name, ServiceURL: "https://auditlog.example/" + name, SecretName: name + "-write",
				ReadCredentials: auditlog.SecretRef{Namespace: "kcp-system", Name: name + "-read"}})
			return name, nil
		}, SetState: func(_ context.Context, name string, s auditlog.State) error {
			if !p.SetState(name, s) {
				return fmt.Errorf("no tenant %s", name)
			}
			return nil
		}}
	})
}

func TestAuditLogRuntimeSecretWriterContract(t *testing.T) {
	contract.RunRuntimeSecretWriterContract(t, func(t *testing.T) contract.RuntimeSecretsFixture {
		w := fake.NewRuntimeSecrets("rt-1")
		return contract.RuntimeSecretsFixture{Writer: w, RuntimeID: "rt-1",
			Read: func(_ context.Context, ns, name string) (map[string][]byte, bool) { return w.Secret("rt-1", ns, name) }}
	})
}

func TestRegistryCacheSourceContract(t *testing.T) {
	contract.RunRegistryCacheSourceContract(t, func(t *testing.T) contract.RegistryCacheSourceFixture {
		s := fake.NewRegistryCacheSource("rt-1")
		return contract.RegistryCacheSourceFixture{Source: s, RuntimeID: "rt-1", Namespace: "team-a",
			PutConfig: func(_ context.Context, name, upstream, size, secret string) error {
				s.PutConfig("rt-1", registrycache.Config{Namespace: "team-a", Name: name, SecretName: secret,
					Cache: shoot.RegistryCache{Upstream: upstream, VolumeSize: size}})
				return nil
			},
			PutSecret: func(_ context.Context, name string, data map[string][]byte) error {
				s.PutSecret("rt-1", registrycache.Key{Namespace: "team-a", Name: name}, data)
				return nil
			},
			Limited:       func(l registrycache.Limits) ports.RegistryCacheSource { s.Limits = l; return s },
			PutKyma:       func(_ context.Context, modules ...string) error { s.PutKyma("rt-1", modules...); return nil },
			DeleteKyma:    func(context.Context) error { s.DeleteKyma("rt-1"); return nil },
			RemoveKymaCRD: func(context.Context) error { s.RemoveKymaCRD("rt-1"); return nil }}
	})
}

func TestRegistryCacheGardenContract(t *testing.T) {
	contract.RunRegistryCacheGardenContract(t, func(t *testing.T) contract.RegistryCacheGardenFixture {
		g := fake.NewRegistryCacheGarden()
		return contract.RegistryCacheGardenFixture{Garden: g, Owners: g,
			ReadSecret: func(_ context.Context, name string) (map[string][]byte, bool, bool) {
				if s, ok := g.Secret(name); ok {
					return s.Data, true, true // the fake's copies are immutable: they are never changed
				}
				return nil, false, g.Exists(name)
			},
			PutForeignSecret: func(_ context.Context, name string) error { g.PutForeign(name); return nil }}
	})
}

func TestRegistryCacheLedgerContract(t *testing.T) {
	contract.RunRegistryCacheLedgerContract(t, func(*testing.T) contract.RegistryCacheLedgerFixture {
		return contract.RegistryCacheLedgerFixture{Ledger: fake.NewRegistryCacheLedger(), Namespace: "kcp-system"}
	})
}

func TestRegistryCacheRuntimesContract(t *testing.T) {
	contract.RunRegistryCacheRuntimesContract(t, func(t *testing.T) contract.RegistryCacheRuntimesFixture {
		r := fake.NewRegistryCacheRuntimes()
		ref := ports.RuntimeRef{Namespace: "kcp-system", RuntimeID: "rt-1"}
		r.Set(ref, ports.RegistryCacheRuntime{ShootName: "c-1"})
		return contract.RegistryCacheRuntimesFixture{Runtimes: r, Ref: ref,
			TakeOver: func(ctx context.Context) error {
				rt, _ := r.Get(ctx, ref)
				rt.Entries = []registrycache.Entry{{Name: "keb", Cache: shoot.RegistryCache{Upstream: "ghcr.io"}}}
				r.Set(ref, rt)
				r.OwnedByOthers[ref] = true
				return nil
			}}
	})
}

func TestAuditLogRuntimesContract(t *testing.T) {
	contract.RunAuditLogRuntimesContract(t, func(t *testing.T) contract.AuditLogRuntimesFixture {
		r := fake.NewAuditLogRuntimes()
		put := func(_ context.Context, id string, o ports.AuditLogOwner) error { r.Set(id, o); return nil }
		return contract.AuditLogRuntimesFixture{Runtimes: r, Put: put, PutElsewhere: put,
			Delete: func(_ context.Context, id string) error { r.Delete(id); return nil }}
	})
}

func TestAuditLogCredentialsContract(t *testing.T) {
	contract.RunAuditLogCredentialsContract(t, func(t *testing.T) contract.AuditLogCredentialsFixture {
		k := fake.NewKCPSecrets()
		return contract.AuditLogCredentialsFixture{Credentials: k, Namespace: "kcp-system", OtherNamespace: "elsewhere",
			Put: func(_ context.Context, ref auditlog.SecretRef, labels map[string]string, data map[string][]byte) error {
				k.SetLabelled(ref, labels, data)
				return nil
			}}
	})
}
