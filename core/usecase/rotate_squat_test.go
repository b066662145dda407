package usecase_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/ports"
)

// TestRotationRefusesNewSecretsOfOtherNames: a GardenerCluster creates only kubeconfig-<its name>. Naming an absent
// Secret of another name (another runtime's kubeconfig before its GardenerCluster writes it, another team's) is
// refused before Gardener is asked, and nothing is written; a Secret of another name that exists and was written
// for this GardenerCluster (a legacy name) keeps being rotated.
func TestRotationRefusesNewSecretsOfOtherNames(t *testing.T) {
	x := newRotation(t)
	for _, name := range []string{"kubeconfig-victim", "db-credentials"} {
		squat := x.req
		squat.Secret.Name = name
		res := x.rotate(t, squat, &squat)
		require.Equal(t, kubeconfig.ReasonSecretName, res.Status.Reason, name)
		require.Equal(t, kubeconfig.StateError, res.Status.State, name)
	}
	require.Zero(t, x.issuer.TotalCalls())
	require.Empty(t, x.store.Changes(), "a refusal writes nothing")

	x.store.Put("kcp-system", "legacy-name", map[string][]byte{"config": []byte("old")}, nil,
		map[string]string{kubeconfig.AnnotationOwner: "kcp-system/rid"})
	legacy := x.req
	legacy.Secret.Name = "legacy-name"
	res := x.rotate(t, legacy, &legacy)
	require.True(t, res.Written, "a legacy Secret written for the GardenerCluster keeps working: %+v", res.Status)
}

// TestRotationConfirmsTheShootLive: the shoot check before an issue reads the shoot live (a cache miss is no proof
// of absence), and a shoot must name the GardenerCluster's runtime. A shoot created a moment ago for another
// runtime (not in the lagging cache yet) and a shoot that names no runtime are refused; a predecessor's shoot of
// the runtime (its runtime-id annotation, no managed-by mark) is not.
func TestRotationConfirmsTheShootLive(t *testing.T) {
	x := newRotation(t)
	x.garden.LagCache(true)
	_, err := x.garden.Apply(t.Context(), ports.ShootApply{Spec: shoot.Spec{Name: "c-victim"}, RuntimeID: "victim"})
	require.NoError(t, err)
	x.garden.PutForeign("c-foreign")
	x.garden.PutPredecessor(shoot.Spec{Name: "c-adopted"}, "rid-adopted")
	for _, s := range []string{"c-victim", "c-foreign", "c-adopted"} {
		x.issuer.AddShoot(s)
	}
	gc := func(name, shootName string) ports.KubeconfigRequest {
		return ports.KubeconfigRequest{Namespace: "kcp-system", Name: name, Shoot: shootName,
			Secret: ports.SecretRef{Namespace: "kcp-system", Name: kubeconfig.SecretName(name), Key: "config"}}
	}
	for _, req := range []ports.KubeconfigRequest{gc("rid-hostile", "c-victim"), gc("rid-hostile", "c-foreign")} {
		res := x.rotate(t, req, &req)
		require.Equal(t, kubeconfig.ReasonShootNotOfRuntime, res.Status.Reason, "%s: %s", req.Shoot, res.Status.Message)
	}
	require.Zero(t, x.issuer.TotalCalls(), "no kubeconfig of another runtime's shoot, nor of a shoot of nobody's")
	require.Empty(t, x.store.Changes())

	adopted := gc("rid-adopted", "c-adopted")
	res := x.rotate(t, adopted, &adopted)
	require.True(t, res.Written, "the predecessor's shoot of the runtime: %s", res.Status.Message)
}
