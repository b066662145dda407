package manifests_test

import (
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/ext"
	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/manifests"
	"github.com/kyma-project/kim/operator/probe"
	"github.com/kyma-project/kim/test/testenv/probeconfig"
)

// probeConfig is config/probe as kustomize renders it.
type probeConfig struct {
	byKind  map[string]*unstructured.Unstructured
	role    *rbacv1.Role
	binding *rbacv1.RoleBinding
	policy  *admissionregistrationv1.ValidatingAdmissionPolicy
	// user is the probe's ServiceAccount as the API server names it; ids the CronJob's --runtime-ids.
	user string
	ids  []string
}

func renderProbe(t *testing.T) probeConfig {
	t.Helper()
	objs, err := manifests.Render("../../config/probe")
	if err != nil {
		t.Fatal(err)
	}
	pc := probeConfig{byKind: map[string]*unstructured.Unstructured{}}
	for _, o := range objs {
		if pc.byKind[o.GetKind()] != nil {
			t.Fatalf("config/probe renders two of kind %s", o.GetKind())
		}
		pc.byKind[o.GetKind()] = o
	}
	for _, kind := range []string{"CronJob", "ConfigMap", "ServiceAccount", "Role", "RoleBinding", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"} {
		if pc.byKind[kind] == nil {
			t.Fatalf("config/probe renders %v; want one %s", kinds(objs), kind)
		}
	}
	pc.role, pc.binding, pc.policy = &rbacv1.Role{}, &rbacv1.RoleBinding{}, &admissionregistrationv1.ValidatingAdmissionPolicy{}
	for kind, into := range map[string]any{"Role": pc.role, "RoleBinding": pc.binding, "ValidatingAdmissionPolicy": pc.policy} {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(pc.byKind[kind].Object, into); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
	}
	sa := pc.byKind["ServiceAccount"]
	pc.user = "system:serviceaccount:" + sa.GetNamespace() + ":" + sa.GetName()
	args, _, _ := unstructured.NestedSlice(probeContainer(t, pc.byKind["CronJob"]), "args")
	for _, a := range args {
		if v, ok := strings.CutPrefix(fmt.Sprint(a), "--runtime-ids="); ok {
			if pc.ids, err = probe.ParseRuntimeIDs(v); err != nil {
				t.Fatalf("the CronJob's %v", err)
			}
		}
	}
	if len(pc.ids) == 0 {
		t.Fatalf("the CronJob passes no --runtime-ids (%v): the probe would provision under random IDs its Role does not name", args)
	}
	return pc
}

func probeContainer(t *testing.T, cj *unstructured.Unstructured) map[string]any {
	t.Helper()
	containers, _, _ := unstructured.NestedSlice(cj.Object, "spec", "jobTemplate", "spec", "template", "spec", "containers")
	if len(containers) != 1 {
		t.Fatalf("the CronJob has %d containers, want 1", len(containers))
	}
	c, _ := containers[0].(map[string]any)
	return c
}

// TestProbeManifests: config/probe renders to a CronJob that runs /probe of the manager's image once at a time, as
// its own ServiceAccount, with the runtime IDs of its Role and admission policy, and the Runtime template mounted
// where the probe reads it (a valid Runtime).
func TestProbeManifests(t *testing.T) {
	pc := renderProbe(t)
	for kind, o := range pc.byKind {
		cluster := kind == "ValidatingAdmissionPolicy" || kind == "ValidatingAdmissionPolicyBinding"
		if ns := o.GetNamespace(); cluster && ns != "" || !cluster && ns != "kcp-system" {
			t.Errorf("%s %s is in namespace %q", kind, o.GetName(), ns)
		}
	}
	cj, cm := pc.byKind["CronJob"], pc.byKind["ConfigMap"]
	if p, _, _ := unstructured.NestedString(cj.Object, "spec", "concurrencyPolicy"); p != "Forbid" {
		t.Errorf("concurrencyPolicy %q: two probes at once would delete each other's Runtime", p)
	}
	pod, _, _ := unstructured.NestedMap(cj.Object, "spec", "jobTemplate", "spec", "template", "spec")
	if sa, _ := pod["serviceAccountName"].(string); sa != pc.byKind["ServiceAccount"].GetName() {
		t.Errorf("serviceAccountName %q, want %q", sa, pc.byKind["ServiceAccount"].GetName())
	}
	c := probeContainer(t, cj)
	if cmd, _ := c["command"].([]any); len(cmd) != 1 || cmd[0] != "/probe" {
		t.Errorf("command %v, want /probe", c["command"])
	}
	if img, _ := c["image"].(string); img != managerImage(t) {
		t.Errorf("image %q is not the manager's %q", img, managerImage(t))
	}
	volumes, _ := pod["volumes"].([]any)
	v, _ := volumes[0].(map[string]any)
	if name, _, _ := unstructured.NestedString(v, "configMap", "name"); name != cm.GetName() {
		t.Errorf("the template volume names ConfigMap %q, want %q", name, cm.GetName())
	}
	data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
	rt := &imv1.Runtime{}
	if err := yaml.UnmarshalStrict([]byte(data["runtime.yaml"]), rt); err != nil || rt.Labels[imv1.LabelBrokerPlanName] == "" {
		t.Errorf("the probe's Runtime template is not a KEB-shaped Runtime: %v", err)
	}
	if len(pc.ids) < 2 {
		t.Errorf("--runtime-ids %v: a run after a failed one needs a second ID while the first one's cluster is deleted", pc.ids)
	}
	// What the integration test grants the probe (probeconfig, without kustomize) is what kustomize renders.
	hand, err := probeconfig.Read("../..")
	if err != nil {
		t.Fatal(err)
	}
	if len(hand.Objects) != len(pc.byKind)-2 {
		t.Errorf("probeconfig reads %d objects, kustomize renders %v", len(hand.Objects), slices.Collect(maps.Keys(pc.byKind)))
	}
	for _, o := range hand.Objects {
		if diff := cmp.Diff(pc.byKind[o.GetKind()].Object, o.Object); diff != "" {
			t.Errorf("%s: probeconfig and kustomize differ (-kustomize +probeconfig):\n%s", o.GetKind(), diff)
		}
	}
	if want, _ := probeContainer(t, pc.byKind["CronJob"])["args"].([]any); fmt.Sprint(want) != fmt.Sprint(hand.Args) {
		t.Errorf("probeconfig reads the CronJob's args %v, kustomize renders %v", hand.Args, want)
	}
	b := pc.binding
	if b.RoleRef != (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: pc.role.Name}) ||
		!slices.Equal(b.Subjects, []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: pc.byKind["ServiceAccount"].GetName(), Namespace: "kcp-system"}}) {
		t.Errorf("the RoleBinding binds %+v to %+v; want the probe's Role to its ServiceAccount only", b.RoleRef, b.Subjects)
	}
}

// TestProbeRoleIsLeastPrivilege holds config/probe to what the probe does: create Runtimes (RBAC cannot name what
// is created; the admission policy does), get and delete the Runtimes named with its runtime IDs, get their
// kubeconfig Secrets. Nothing else: no list or watch (either would reach every Runtime or every Secret of kcp-system:
// the Gardener credentials, every runtime's admin kubeconfig), no Secret but its own runtimes' kubeconfigs, nothing
// cluster-wide.
func TestProbeRoleIsLeastPrivilege(t *testing.T) {
	pc := renderProbe(t)
	for _, kind := range []string{"ClusterRole", "ClusterRoleBinding"} {
		if pc.byKind[kind] != nil {
			t.Errorf("config/probe has a %s; the probe needs nothing cluster-wide", kind)
		}
	}
	secrets := make([]string, len(pc.ids))
	for i, id := range pc.ids {
		secrets[i] = "kubeconfig-" + id
	}
	for _, r := range pc.role.Rules {
		for _, list := range [][]string{r.Verbs, r.Resources, r.APIGroups, r.ResourceNames} {
			if slices.ContainsFunc(list, func(s string) bool { return strings.Contains(s, "*") }) {
				t.Errorf("wildcard in rule %+v", r)
			}
		}
		for _, v := range r.Verbs {
			if v == "list" || v == "watch" || v == "deletecollection" {
				t.Errorf("verb %s in rule %+v: it reaches every object of the resource, whatever the names", v, r)
			}
		}
		if slices.Contains(r.Resources, "secrets") && !slices.Equal(r.ResourceNames, secrets) {
			t.Errorf("Secrets rule %+v: want only the kubeconfig Secrets %v of the probe's runtimes", r, secrets)
		}
	}
	want := []rbacv1.PolicyRule{
		{APIGroups: []string{imv1.GroupVersion.Group}, Resources: []string{"runtimes"}, Verbs: []string{"create"}},
		{APIGroups: []string{imv1.GroupVersion.Group}, Resources: []string{"runtimes"}, ResourceNames: pc.ids, Verbs: []string{"get", "delete"}},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: secrets, Verbs: []string{"get"}},
	}
	if diff := cmp.Diff(want, pc.role.Rules); diff != "" {
		t.Errorf("the probe's Role (-want +config/probe):\n%s", diff)
	}
}

// TestProbeAdmissionPolicy evaluates the rendered ValidatingAdmissionPolicy's CEL (the API server evaluates the same
// expressions; TestProbeIntegration shows it does): the probe's ServiceAccount may create Runtimes named with its
// runtime IDs (those of the CronJob and the Role) and no others; nobody else, not even system:masters, may create
// one named with them.
func TestProbeAdmissionPolicy(t *testing.T) {
	pc := renderProbe(t)
	p := pc.policy.Spec
	if p.FailurePolicy == nil || *p.FailurePolicy != admissionregistrationv1.Fail {
		t.Errorf("failurePolicy %v: a policy that cannot be evaluated must refuse", p.FailurePolicy)
	}
	if p.ParamKind != nil || p.MatchConditions != nil {
		t.Errorf("params or match conditions: the policy must hold for every create of a Runtime")
	}
	rules := p.MatchConstraints.ResourceRules
	if len(rules) != 1 || !slices.Equal(rules[0].APIGroups, []string{imv1.GroupVersion.Group}) || !slices.Equal(rules[0].Resources, []string{"runtimes"}) ||
		!slices.Contains(rules[0].Operations, admissionregistrationv1.Create) || rules[0].ResourceNames != nil {
		t.Errorf("the policy matches %+v; want every create of a Runtime", rules)
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(pc.byKind["ValidatingAdmissionPolicyBinding"].Object, binding); err != nil {
		t.Fatal(err)
	}
	if binding.Spec.PolicyName != pc.policy.Name || !slices.Equal(binding.Spec.ValidationActions, []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}) ||
		binding.Spec.MatchResources != nil || binding.Spec.ParamRef != nil {
		t.Errorf("the binding %+v; want Deny for the policy %s everywhere", binding.Spec, pc.policy.Name)
	}

	vars := evalVariables(t, pc.policy, "", "")
	listed, _ := vars["runtimeIDs"].(ref.Val)
	if listed == nil {
		t.Fatalf("the policy has no variable runtimeIDs")
	}
	ids, err := listed.ConvertToNative(reflect.TypeFor[[]string]())
	if err != nil || !slices.Equal(ids.([]string), pc.ids) {
		t.Errorf("the policy's runtimeIDs %v (%v), the CronJob's --runtime-ids %v: they must be the same", listed, err, pc.ids)
	}
	if probeUser, _ := vars["probe"].(ref.Val); probeUser == nil || probeUser.Value() != pc.user {
		t.Errorf("the policy names the probe %v; its ServiceAccount is %s (namespace and namePrefix of the kustomization)", probeUser, pc.user)
	}
	const keb = "system:serviceaccount:kcp-system:kcp-kyma-environment-broker"
	other := "5d1e0c9a-7b3f-4e2d-8a61-c0ffee000001"
	for _, tc := range []struct {
		user, name string
		groups     []string
		allowed    bool
	}{
		{user: pc.user, name: pc.ids[0], allowed: true},
		{user: pc.user, name: pc.ids[len(pc.ids)-1], allowed: true},
		{user: pc.user, name: other},
		{user: pc.user, name: pc.ids[0] + "x"},
		{user: keb, name: other, allowed: true},
		{user: keb, name: pc.ids[0]},
		{user: "kubernetes-admin", groups: []string{"system:masters"}, name: pc.ids[1]},
		{user: pc.user + "-other", name: pc.ids[0]},
	} {
		if got := admits(t, pc.policy, tc.user, tc.groups, tc.name); got != tc.allowed {
			t.Errorf("%s creates Runtime %s: admitted %t, want %t", tc.user, tc.name, got, tc.allowed)
		}
	}
}

func celEnv(t *testing.T) *cel.Env {
	t.Helper()
	env, err := cel.NewEnv(cel.Variable("request", cel.DynType), cel.Variable("object", cel.DynType),
		cel.Variable("variables", cel.MapType(cel.StringType, cel.DynType)), ext.Strings())
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func eval(t *testing.T, env *cel.Env, expr string, act map[string]any) ref.Val {
	t.Helper()
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		t.Fatalf("compile %q: %v", expr, iss.Err())
	}
	prg, err := env.Program(ast)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := prg.Eval(act)
	if err != nil {
		t.Fatalf("evaluate %q: %v", expr, err)
	}
	return out
}

func activation(vars map[string]any, user string, groups []string, name string) map[string]any {
	gs := make([]any, len(groups))
	for i, g := range groups {
		gs[i] = g
	}
	return map[string]any{
		"request":   map[string]any{"operation": "CREATE", "userInfo": map[string]any{"username": user, "groups": gs}},
		"object":    map[string]any{"metadata": map[string]any{"name": name, "namespace": "kcp-system"}},
		"variables": vars,
	}
}

// evalVariables evaluates the policy's variables in order, as the API server does, for a create of Runtime name by
// user.
func evalVariables(t *testing.T, p *admissionregistrationv1.ValidatingAdmissionPolicy, user, name string, groups ...string) map[string]any {
	t.Helper()
	env, vars := celEnv(t), map[string]any{}
	for _, v := range p.Spec.Variables {
		vars[v.Name] = eval(t, env, v.Expression, activation(vars, user, groups, name))
	}
	return vars
}

// admits says whether every validation of the policy passes for a create of Runtime name by user; each message
// must evaluate to a string.
func admits(t *testing.T, p *admissionregistrationv1.ValidatingAdmissionPolicy, user string, groups []string, name string) bool {
	t.Helper()
	env := celEnv(t)
	act := activation(evalVariables(t, p, user, name, groups...), user, groups, name)
	ok := true
	for _, v := range p.Spec.Validations {
		if passed, _ := eval(t, env, v.Expression, act).Value().(bool); !passed {
			ok = false
			if msg, _ := eval(t, env, v.MessageExpression, act).Value().(string); msg == "" {
				t.Errorf("validation %q refuses without a message", v.Expression)
			}
		}
	}
	return ok
}

func kinds(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetName())
	}
	return out
}

// managerImage is the manager's image as config/manager's kustomization sets it (name:tag).
func managerImage(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(repoPath("config", "manager", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Images []struct {
			Name    string `json:"name"`
			NewName string `json:"newName"`
			NewTag  string `json:"newTag"`
		} `json:"images"`
	}
	if err := yaml.Unmarshal(raw, &k); err != nil || len(k.Images) != 1 {
		t.Fatalf("config/manager/kustomization.yaml images: %v, %+v", err, k.Images)
	}
	return k.Images[0].NewName + ":" + k.Images[0].NewTag
}
