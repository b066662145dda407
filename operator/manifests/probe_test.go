package manifests_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/manifests"
)

// TestProbeManifests: config/probe renders to a CronJob that runs /probe of the manager's image once at a time, with
// a service account allowed only what KEB does with Runtimes and reading Secrets, and the Runtime template mounted
// where the probe reads it (a valid Runtime).
func TestProbeManifests(t *testing.T) {
	objs, err := manifests.Render("../../config/probe")
	if err != nil {
		t.Fatal(err)
	}
	byKind := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		byKind[o.GetKind()] = o
		if o.GetNamespace() != "kcp-system" {
			t.Errorf("%s %s is in namespace %q, want kcp-system", o.GetKind(), o.GetName(), o.GetNamespace())
		}
	}
	cj, cm, role := byKind["CronJob"], byKind["ConfigMap"], byKind["Role"]
	if cj == nil || cm == nil || role == nil || byKind["ServiceAccount"] == nil || byKind["RoleBinding"] == nil {
		t.Fatalf("config/probe renders %v; want a CronJob, ConfigMap, ServiceAccount, Role and RoleBinding", kinds(objs))
	}
	if p, _, _ := unstructured.NestedString(cj.Object, "spec", "concurrencyPolicy"); p != "Forbid" {
		t.Errorf("concurrencyPolicy %q: two probes at once would delete each other's Runtime", p)
	}
	pod, _, _ := unstructured.NestedMap(cj.Object, "spec", "jobTemplate", "spec", "template", "spec")
	if sa, _ := pod["serviceAccountName"].(string); sa != byKind["ServiceAccount"].GetName() {
		t.Errorf("serviceAccountName %q, want %q", sa, byKind["ServiceAccount"].GetName())
	}
	containers, _ := pod["containers"].([]any)
	c, _ := containers[0].(map[string]any)
	if cmd, _ := c["command"].([]any); len(cmd) != 1 || cmd[0] != "/probe" {
		t.Errorf("command %v, want /probe", c["command"])
	}
	if img, _ := c["image"].(string); !strings.Contains(img, "infrastructure-manager") {
		t.Errorf("image %q is not the manager's", img)
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
	rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
	for _, r := range rules {
		verbs, _ := r.(map[string]any)["verbs"].([]any)
		for _, v := range verbs {
			if v == "update" || v == "patch" || v == "*" || v == "deletecollection" {
				t.Errorf("the probe may %s: it needs only what KEB does", v)
			}
		}
	}
}

func kinds(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetName())
	}
	return out
}
