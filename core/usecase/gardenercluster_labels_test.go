package usecase_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
)

// TestGardenerClusterLabelsOfThePreviousManager: a GardenerCluster the operator creates carries the Runtime's labels
// and the labels the previous infrastructure manager gave every GardenerCluster it created (managed-by
// infrastructure-manager, internal, the shoot's name and regions from the spec); a GardenerCluster KEB created
// keeps saying lifecycle-manager, and the Runtime's own managed-by label is not copied over either.
func TestGardenerClusterLabelsOfThePreviousManager(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		reason   string
		existing map[string]string // labels of a GardenerCluster KEB created; nil: none exists
		want     map[string]string
	}{
		{reason: "created by the operator", want: map[string]string{
			"kyma-project.io/runtime-id": "rt-1", "kyma-project.io/broker-plan-name": "aws",
			"operator.kyma-project.io/managed-by": "infrastructure-manager", "operator.kyma-project.io/internal": "true",
			"kyma-project.io/shoot-name": "c-1", "kyma-project.io/region": "eu-west-1", "kyma-project.io/platform-region": "cf-eu10",
		}},
		{reason: "created by KEB", existing: map[string]string{"operator.kyma-project.io/managed-by": "lifecycle-manager"},
			want: map[string]string{"kyma-project.io/runtime-id": "rt-1", "kyma-project.io/broker-plan-name": "aws",
				"operator.kyma-project.io/managed-by": "lifecycle-manager"}},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			clock := fake.NewClock(reapStart)
			garden, access := fake.NewGarden(clock), fake.NewAccessObjects()
			p := &usecase.Provisioner{Shoots: garden, Seeds: garden, Access: access, Configurator: fake.NewRuntimeConfigurator(),
				Guard: &fake.DeletionGuard{}, Config: modelConfig(), Policy: modelPolicy()}
			if tc.existing != nil {
				if err := access.Ensure(ctx, ports.GardenerClusterSpec{Namespace: modelNamespace, RuntimeID: "rt-1", ShootName: "c-1",
					SecretName: kubeconfig.SecretName("rt-1"), SecretKey: kubeconfig.SecretKey, Labels: tc.existing}); err != nil {
					t.Fatal(err)
				}
			}
			rt := &kcpRuntime{id: "rt-1", shoot: "c-1", plan: "aws", generation: 1}
			req := usecase.RuntimeRequest{Runtime: rt.spec(), Namespace: modelNamespace, Plan: "aws", Labels: map[string]string{
				"kyma-project.io/runtime-id": "rt-1", "kyma-project.io/broker-plan-name": "aws",
				// As on a Runtime KEB labelled like its GardenerClusters: it says nothing of who creates this one.
				"operator.kyma-project.io/managed-by": "lifecycle-manager",
			}}
			for range 3 {
				res, err := p.Provision(ctx, req, clock.Now())
				if err != nil {
					t.Fatal(err)
				}
				req.Configured = res.Configured
				garden.Succeed("c-1")
			}
			gc, ok := access.GardenerCluster(modelNamespace, "rt-1")
			if !ok {
				t.Fatal("no GardenerCluster")
			}
			if diff := cmp.Diff(tc.want, gc.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
		})
	}
}
