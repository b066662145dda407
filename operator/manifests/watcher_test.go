package manifests_test

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kyma-project/kim/operator/config"
	"github.com/kyma-project/kim/operator/controllers/registrycachesync"
	"github.com/kyma-project/kim/operator/manifests"
)

// findObject is the rendered object of kind and name, or fails the test.
func findObject(t *testing.T, objs []*unstructured.Unstructured, dir, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("%s has no %s %s", dir, kind, name)
	return nil
}

// TestWatcherRoutesToTheListener: the Watcher of config/watcher makes lifecycle-manager route the listener's path
// (/v2/<spec.manager>/event) to the listener Service of config/default on its port, through the gateway selected
// by lifecycle-manager's default label; the AuthorizationPolicy admits the gateway principal the listener trusts by
// default on that port only; the NetworkPolicy lets only the gateway's pods reach that port and leaves the others.
func TestWatcherRoutesToTheListener(t *testing.T) {
	def, err := manifests.Render("../../config/default")
	if err != nil {
		t.Fatal(err)
	}
	watcher, err := manifests.Render("../../config/watcher")
	if err != nil {
		t.Fatal(err)
	}
	svc := findObject(t, def, "config/default", "Service", "kim-registry-cache-listener")
	ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	if len(ports) != 1 {
		t.Fatalf("listener Service ports %v; want one", ports)
	}
	port := ports[0].(map[string]any)["port"]

	w := findObject(t, watcher, "config/watcher", "Watcher", "kim-registry-cache")
	if w.GetAPIVersion() != "operator.kyma-project.io/v1beta2" {
		t.Errorf("Watcher apiVersion %s; want operator.kyma-project.io/v1beta2", w.GetAPIVersion())
	}
	manager, _, _ := unstructured.NestedString(w.Object, "spec", "manager")
	if got := fmt.Sprintf("/v2/%s/event", manager); got != registrycachesync.WatcherPath {
		t.Errorf("lifecycle-manager routes %s; the listener serves %s", got, registrycachesync.WatcherPath)
	}
	if w.GetLabels()["operator.kyma-project.io/managed-by"] != manager {
		t.Errorf("label operator.kyma-project.io/managed-by %q; want %q", w.GetLabels()["operator.kyma-project.io/managed-by"], manager)
	}
	info, _, _ := unstructured.NestedMap(w.Object, "spec", "serviceInfo")
	if info["name"] != svc.GetName() || info["namespace"] != svc.GetNamespace() || fmt.Sprint(info["port"]) != fmt.Sprint(port) {
		t.Errorf("serviceInfo %v; want %s/%s port %v", info, svc.GetNamespace(), svc.GetName(), port)
	}
	sel, _, _ := unstructured.NestedStringMap(w.Object, "spec", "gateway", "selector", "matchLabels")
	if sel["operator.kyma-project.io/watcher-gateway"] != "default" {
		t.Errorf("gateway selector %v; want lifecycle-manager's default watcher gateway", sel)
	}

	ap := findObject(t, watcher, "config/watcher", "AuthorizationPolicy", "kim-registry-cache-listener")
	rules, _, _ := unstructured.NestedSlice(ap.Object, "spec", "rules")
	want := fmt.Sprintf("[map[from:[map[source:map[principals:[%s]]]] to:[map[operation:map[ports:[%v]]]]] map[to:[map[operation:map[notPorts:[%v]]]]]]",
		config.DefaultWatcherGatewayPrincipal, port, port)
	if got := fmt.Sprint(rules); got != want {
		t.Errorf("AuthorizationPolicy rules\n%s\nwant\n%s", got, want)
	}

	np := findObject(t, def, "config/default", "NetworkPolicy", "kim-registry-cache-listener")
	ingress, _, _ := unstructured.NestedSlice(np.Object, "spec", "ingress")
	want = fmt.Sprintf("[map[from:[map[namespaceSelector:map[matchLabels:map[kubernetes.io/metadata.name:istio-system]] podSelector:map[matchLabels:map[istio:ingressgateway]]]] ports:[map[port:%v protocol:TCP]]] map[ports:[map[endPort:%v port:1 protocol:TCP] map[endPort:65535 port:%v protocol:TCP]]]]",
		port, toInt(port)-1, toInt(port)+1)
	if got := fmt.Sprint(ingress); got != want {
		t.Errorf("NetworkPolicy ingress\n%s\nwant\n%s", got, want)
	}
}

func toInt(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	}
	return 0
}
