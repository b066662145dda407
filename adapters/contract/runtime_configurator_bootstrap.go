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
	t.Run("bootstrap: an object of a kind the landscape did not allow refuses the whole set, nothing is applied", func(t *testing.T) {
		cases := map[string]struct {
			obj     runtimeconfig.BootstrapObject
			allowed []runtimeconfig.BootstrapKind
			names   string
		}{
			"a ClusterRoleBinding": {obj: bootstrapObject("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "", "everyone-admin",
				`"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"},"subjects":[{"kind":"Group","apiGroup":"rbac.authorization.k8s.io","name":"system:authenticated"}]`),
				names: "ClusterRoleBinding rbac.authorization.k8s.io/everyone-admin"},
			"a ConfigMap in kube-system": {obj: bootstrapObject("v1", "ConfigMap", "kube-system", "elsewhere", `"data":{"a":"b"}`),
				names: "ConfigMap core/kube-system/elsewhere"},
			"a Namespace allowed only in another namespace's entry": {obj: bootstrapObject("v1", "Namespace", "", "bootstrap-extra", ""),
				allowed: []runtimeconfig.BootstrapKind{{Kind: "Namespace", Namespace: "kyma-system"}}, names: "Namespace core/bootstrap-extra"},
		}
		for name, tc := range cases {
			t.Run(name, func(t *testing.T) {
				f := newFixture(t, FixtureOptions{ServeOIDC: true})
				facts := contractFacts(f.RuntimeID)
				facts.Bootstrap = BootstrapSet()
				facts.Bootstrap.Allowed = tc.allowed
				facts.Bootstrap.Objects = append(facts.Bootstrap.Objects, tc.obj)
				res := mustConfigure(t, f, compute(t, facts))
				if res.Bootstrap.Done || res.Bootstrap.Reason != runtimeconfig.ReasonBootstrapObjectRefused || !strings.Contains(res.Bootstrap.Message, tc.names) {
					t.Errorf("bootstrap outcome %+v, want %s naming %q", res.Bootstrap, runtimeconfig.ReasonBootstrapObjectRefused, tc.names)
				}
				if res.Problem() != nil {
					t.Errorf("a refused set holds the runtime up: %+v", res.Problem())
				}
				if ok, _ := f.Inside.BootstrapObject(t.Context(), "ConfigMap", runtimeconfig.Namespace, "bootstrap-settings"); ok {
					t.Error("an object of a refused set was applied")
				}
				if ok, _ := f.Inside.PullSecret(t.Context(), runtimeconfig.Namespace, "bootstrap-pull"); ok {
					t.Error("the pull secret of a refused set was copied")
				}
				if ok, _ := f.Inside.BootstrapObject(t.Context(), tc.obj.Kind, tc.obj.Namespace, tc.obj.Name); ok {
					t.Errorf("the refused %s was applied", tc.obj.Kind)
				}
			})
		}
	})
	t.Run("bootstrap: a cluster-scoped kind the landscape listed is applied", func(t *testing.T) {
		f := newFixture(t, FixtureOptions{ServeOIDC: true})
		facts := contractFacts(f.RuntimeID)
		facts.Bootstrap = BootstrapSet()
		facts.Bootstrap.Allowed = []runtimeconfig.BootstrapKind{{Kind: "Namespace"}}
		facts.Bootstrap.Objects = append(facts.Bootstrap.Objects, bootstrapObject("v1", "Namespace", "", "bootstrap-extra", ""))
		res := configureBootstrapping(t, f, compute(t, facts))
		if res.Bootstrap.Reason != runtimeconfig.ReasonBootstrapInProgress {
			t.Errorf("bootstrap outcome %+v", res.Bootstrap)
		}
		if ok, err := f.Inside.BootstrapObject(t.Context(), "Namespace", "", "bootstrap-extra"); err != nil || !ok {
			t.Errorf("listed Namespace not applied: %v", err)
		}
	})
	t.Run("bootstrap: what is removed from the manifests is pruned, never an object the operator did not create", func(t *testing.T) {
		f := newFixture(t, FixtureOptions{ServeOIDC: true})
		ctx := t.Context()
		facts := contractFacts(f.RuntimeID)
		facts.Bootstrap = BootstrapSet()
		facts.Bootstrap.Objects = append(facts.Bootstrap.Objects,
			bootstrapObject("v1", "ConfigMap", "", "bootstrap-removed", `"data":{"a":"b"}`),
			bootstrapObject("v1", "ConfigMap", "", "bootstrap-taken-over", `"data":{"a":"b"}`))
		configureBootstrapping(t, f, compute(t, facts))
		for _, name := range []string{"bootstrap-removed", "bootstrap-taken-over"} {
			if ok, err := f.Inside.BootstrapObject(ctx, "ConfigMap", runtimeconfig.Namespace, name); err != nil || !ok {
				t.Fatalf("ConfigMap %s not applied: %v", name, err)
			}
		}
		// Someone re-creates one of them as their own, then the landscape removes both and the pull secret.
		must(t, f.Inside.ReplaceBootstrapObject(ctx, "ConfigMap", runtimeconfig.Namespace, "bootstrap-taken-over"))
		facts.Bootstrap = BootstrapSet()
		facts.Bootstrap.PullSecret = nil
		configureBootstrapping(t, f, compute(t, facts))
		if ok, err := f.Inside.BootstrapObject(ctx, "ConfigMap", runtimeconfig.Namespace, "bootstrap-removed"); err != nil || ok {
			t.Errorf("a ConfigMap removed from the manifests is still there (%v)", err)
		}
		if ok, err := f.Inside.PullSecret(ctx, runtimeconfig.Namespace, "bootstrap-pull"); err != nil || ok {
			t.Errorf("a pull secret removed from the configuration is still there (%v)", err)
		}
		if ok, err := f.Inside.BootstrapObject(ctx, "ConfigMap", runtimeconfig.Namespace, "bootstrap-taken-over"); err != nil || !ok {
			t.Errorf("an object someone else re-created without the bootstrap label was pruned (%v)", err)
		}
		for _, o := range [][2]string{{"ConfigMap", "bootstrap-settings"}, {"Deployment", "bootstrap-agent"}} {
			if ok, err := f.Inside.BootstrapObject(ctx, o[0], runtimeconfig.Namespace, o[1]); err != nil || !ok {
				t.Errorf("%s %s of the current set is gone: %v", o[0], o[1], err)
			}
		}
	})
}

// configureBootstrapping configures d and fails unless everything but the bootstrap Deployments is reached.
func configureBootstrapping(t *testing.T, f RuntimeConfiguratorFixture, d runtimeconfig.Desired) runtimeconfig.Result {
	t.Helper()
	res, err := f.Configurator.Configure(t.Context(), d)
	if err != nil {
		t.Fatalf("configure: %v", err)
	}
	if p := res.Problem(); p != nil && p.Reason != runtimeconfig.ReasonBootstrapInProgress {
		t.Fatalf("configure: %s: %s", p.Reason, p.Message)
	}
	return res
}

// bootstrapObject is a manifest of kind with the JSON fields body (without braces) after its metadata.
func bootstrapObject(apiVersion, kind, namespace, name, body string) runtimeconfig.BootstrapObject {
	meta := `{"name":"` + name + `"`
	if namespace != "" {
		meta += `,"namespace":"` + namespace + `"`
	}
	raw := `{"apiVersion":"` + apiVersion + `","kind":"` + kind + `","metadata":` + meta + `}`
	if body != "" {
		raw += "," + body
	}
	return runtimeconfig.BootstrapObject{APIVersion: apiVersion, Kind: kind, Name: name, Namespace: namespace, JSON: []byte(raw + "}")}
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
