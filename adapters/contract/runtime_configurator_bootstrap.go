package contract

import (
	"strings"
	"testing"

	"github.com/kyma-project/kim/core/domain/runtimeconfig"
)

func runBootstrapContract(t *testing.T, newFixture func(t *testing.T, o FixtureOptions) RuntimeConfiguratorFixture) {
	t.Run("bootstrap: applied into kyma-system with the pull secret, done when the Deployments are available", func(t *testing.T) {
		f := newFixture(t, FixtureOptions{ServeOIDC: true})
		ctx := t.Context()
		facts := contractFacts(f.RuntimeID)
		facts.Bootstrap = BootstrapSet()
		d := compute(t, facts)
		res, err := f.Configurator.Configure(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		if res.Bootstrap.Reason != runtimeconfig.ReasonBootstrapInProgress || !strings.Contains(res.Bootstrap.Message, "bootstrap-agent") {
			t.Errorf("bootstrap outcome %+v, want %s naming the Deployment", res.Bootstrap, runtimeconfig.ReasonBootstrapInProgress)
		}
		for _, o := range [][2]string{{"ConfigMap", "bootstrap-settings"}, {"Deployment", "bootstrap-agent"}} {
			if ok, err := f.Inside.BootstrapObject(ctx, o[0], runtimeconfig.Namespace, o[1]); err != nil || !ok {
				t.Errorf("%s %s not in kyma-system: %v", o[0], o[1], err)
			}
		}
		if ok, err := f.Inside.PullSecret(ctx, runtimeconfig.Namespace, "bootstrap-pull"); err != nil || !ok {
			t.Errorf("pull secret not copied: %v", err)
		}
		must(t, f.Inside.SetDeploymentAvailable(ctx, runtimeconfig.Namespace, "bootstrap-agent"))
		res = mustConfigure(t, f, d)
		if !res.Bootstrap.Done || res.Bootstrap.Reason != runtimeconfig.ReasonBootstrapCompleted {
			t.Errorf("bootstrap outcome %+v", res.Bootstrap)
		}
	})
	t.Run("bootstrap: manifests that cannot be used hold nothing up and apply nothing", func(t *testing.T) {
		f := newFixture(t, FixtureOptions{ServeOIDC: true})
		facts := contractFacts(f.RuntimeID)
		facts.Bootstrap = BootstrapSet()
		facts.Bootstrap.Problem = "manifests.yaml: document 2 has no kind"
		d := compute(t, facts)
		res := mustConfigure(t, f, d)
		if res.Bootstrap.Done || res.Bootstrap.Reason != runtimeconfig.ReasonBootstrapManifestsInvalid {
			t.Errorf("bootstrap outcome %+v", res.Bootstrap)
		}
		if ok, _ := f.Inside.BootstrapObject(t.Context(), "ConfigMap", runtimeconfig.Namespace, "bootstrap-settings"); ok {
			t.Error("an object of an invalid set was applied")
		}
	})
}

// BootstrapSet is a bootstrap set of a ConfigMap and a Deployment that pulls with a pull secret.
func BootstrapSet() *runtimeconfig.Bootstrap {
	return &runtimeconfig.Bootstrap{Source: "kcp-system/bootstrap",
		PullSecret: &runtimeconfig.PullSecret{Name: "bootstrap-pull", Type: "kubernetes.io/dockerconfigjson",
			Data: map[string][]byte{".dockerconfigjson": []byte(`{"auths":{}}`)}},
		Objects: []runtimeconfig.BootstrapObject{
			{APIVersion: "v1", Kind: "ConfigMap", Name: "bootstrap-settings",
				JSON: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bootstrap-settings"},"data":{"mode":"minimal"}}`)},
			{APIVersion: "apps/v1", Kind: "Deployment", Name: "bootstrap-agent",
				JSON: []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"bootstrap-agent"},"spec":{"replicas":1,` +
					`"selector":{"matchLabels":{"app":"bootstrap-agent"}},"template":{"metadata":{"labels":{"app":"bootstrap-agent"}},` +
					`"spec":{"imagePullSecrets":[{"name":"bootstrap-pull"}],"containers":[{"name":"agent","image":"registry.example.com/agent:1"}]}}}}`)},
		}}
}
