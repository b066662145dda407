package usecase_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/domain/lifecycle"
	"github.com/kyma-project/kim/core/domain/registrycache"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/usecase"
)

// TestProvisionPassesOnlyTheRuntimesOwnRegistryCredentials: the Runtime's spec.imageRegistryCache is written by
// others too (KEB); customer B naming customer A's copy, or a cloud-credentials Secret of the project, must never
// reach B's shoot. Only a reg-cache-* copy labelled with B's runtime ID is referenced; anything else fails the
// Runtime with a stable reason and applies nothing (the shoot keeps the caches it has).
func TestProvisionPassesOnlyTheRuntimesOwnRegistryCredentials(t *testing.T) {
	ctx := context.Background()
	copies := fake.NewRegistryCacheGarden()
	data := map[string][]byte{"username": []byte("a"), "password": []byte("b")}
	mine := registrycache.SecretName("rt-b", "uid-1", data)
	theirs := registrycache.SecretName("rt-a", "uid-9", data)
	for _, s := range []registrycache.GardenSecret{{Name: mine, RuntimeID: "rt-b", CacheUID: "uid-1", Data: data},
		{Name: theirs, RuntimeID: "rt-a", CacheUID: "uid-9", Data: data}} {
		if _, err := copies.EnsureSecret(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		reason, ref string
		applied     bool
	}{
		{"the runtime's own copy is referenced", mine, true},
		{"another runtime's copy is refused", theirs, false},
		{"a project Secret that is no copy is refused", "aws-credentials", false},
		{"a copy name that does not exist is refused", registrycache.SecretPrefix + "0000", false},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			clock := fake.NewClock(reapStart)
			p, garden := newTestProvisioner(clock)
			p.RegistryCredentials = copies
			rt := &kcpRuntime{id: "rt-b", shoot: "c-b", plan: "aws", generation: 1}
			spec := rt.spec()
			spec.RegistryCaches = []shoot.RegistryCache{{Upstream: "quay.io"},
				{Upstream: "docker.io", SecretReferenceName: tc.ref, CredentialsSecret: tc.ref}}
			req := usecase.RuntimeRequest{Runtime: spec, Namespace: modelNamespace, Plan: "aws", Labels: map[string]string{}}
			res, err := p.Provision(ctx, req, clock.Now())
			if err != nil {
				t.Fatal(err)
			}
			s, exists := garden.Spec("c-b")
			referenced := exists && slices.ContainsFunc(s.Resources, func(r shoot.ResourceRef) bool { return r.TargetName == tc.ref })
			if referenced != tc.applied {
				t.Fatalf("shoot references %s: %v, want %v (decision %s %s: %s)", tc.ref, referenced, tc.applied,
					res.Decision.State, res.Decision.Reason, res.Decision.Message)
			}
			if !tc.applied && (res.Decision.Reason != lifecycle.ReasonSpecInvalid ||
				!strings.Contains(res.Decision.Message, string(shoot.ReasonForeignRegistryCredentials))) {
				t.Errorf("decision %s %s: %s; want %s naming %s", res.Decision.State, res.Decision.Reason, res.Decision.Message,
					lifecycle.ReasonSpecInvalid, shoot.ReasonForeignRegistryCredentials)
			}
			// The previous infrastructure manager's condition says so too.
			if c := conditionOf(res, lifecycle.ConditionRegistryCacheConfigured); !tc.applied &&
				(c == nil || c.Status || c.Reason != lifecycle.ReasonRegistryCacheGardenClusterConfigFailed) {
				t.Errorf("condition %s: %+v, want false %s", lifecycle.ConditionRegistryCacheConfigured, c, lifecycle.ReasonRegistryCacheGardenClusterConfigFailed)
			}
		})
	}
}
