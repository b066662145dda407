package manifests_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kyma-project/kim/operator/manifests"
)

// TestServiceMonitorAuthenticatesAndVerifiesTLS: the shipped ServiceMonitor scrapes with `authorization` from the
// token Secret of the scraper ServiceAccount config/default ships (bound to the metrics reader ClusterRole only),
// verifies the endpoint's certificate for the metrics Service's DNS name with the CA of the Secret the Deployment
// mounts at --metrics-cert-path, and uses neither insecureSkipVerify nor the deprecated bearerTokenFile.
func TestServiceMonitorAuthenticatesAndVerifiesTLS(t *testing.T) {
	objs, err := manifests.Render("../../config/default")
	if err != nil {
		t.Fatal(err)
	}
	find := func(kind, name string) *unstructured.Unstructured {
		for _, o := range objs {
			if o.GetKind() == kind && o.GetName() == name {
				return o
			}
		}
		t.Fatalf("config/default has no %s %s", kind, name)
		return nil
	}
	sm := find("ServiceMonitor", "kim-controller-manager-metrics-monitor")
	endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	if len(endpoints) != 1 {
		t.Fatalf("endpoints %v; want one", endpoints)
	}
	ep := endpoints[0].(map[string]any)
	str := func(path ...string) string {
		v, _, _ := unstructured.NestedString(ep, path...)
		return v
	}
	if _, found := ep["bearerTokenFile"]; found {
		t.Error("the ServiceMonitor uses the deprecated bearerTokenFile; want authorization")
	}
	if v, _, _ := unstructured.NestedBool(ep, "tlsConfig", "insecureSkipVerify"); v {
		t.Error("the ServiceMonitor skips TLS verification")
	}
	if str("authorization", "type") != "Bearer" {
		t.Errorf("authorization type %q; want Bearer", str("authorization", "type"))
	}
	token := find("Secret", str("authorization", "credentials", "name"))
	if token.Object["type"] != "kubernetes.io/service-account-token" || str("authorization", "credentials", "key") != "token" {
		t.Errorf("the scrape token Secret %s is %v with key %q; want a service-account-token Secret's token", token.GetName(),
			token.Object["type"], str("authorization", "credentials", "key"))
	}
	sa := find("ServiceAccount", token.GetAnnotations()["kubernetes.io/service-account.name"])
	bound := false
	for _, o := range objs {
		if o.GetKind() != "ClusterRoleBinding" && o.GetKind() != "RoleBinding" {
			continue
		}
		subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
		for _, s := range subjects {
			if s.(map[string]any)["name"] != sa.GetName() {
				continue
			}
			role, _, _ := unstructured.NestedString(o.Object, "roleRef", "name")
			if o.GetKind() != "ClusterRoleBinding" || role != "kim-metrics-reader" {
				t.Errorf("the scraper %s is bound by %s %s to %s; want only the ClusterRole kim-metrics-reader", sa.GetName(), o.GetKind(), o.GetName(), role)
			}
			bound = true
		}
	}
	if !bound {
		t.Errorf("the scraper %s is not bound to kim-metrics-reader", sa.GetName())
	}
	svc := find("Service", "kim-controller-manager-metrics-service")
	if want := svc.GetName() + "." + svc.GetNamespace() + ".svc"; str("tlsConfig", "serverName") != want {
		t.Errorf("serverName %q; want the metrics Service's name %s", str("tlsConfig", "serverName"), want)
	}
	ca := str("tlsConfig", "ca", "secret", "name")
	dep := find("Deployment", "kim-controller-manager")
	volumes, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "volumes")
	mounted := false
	for _, v := range volumes {
		if name, _, _ := unstructured.NestedString(v.(map[string]any), "secret", "secretName"); name == ca {
			mounted = true
		}
	}
	if !mounted || str("tlsConfig", "ca", "secret", "key") != "ca.crt" {
		t.Errorf("the ServiceMonitor trusts the CA of Secret %q (key %q), which the manager does not mount for its serving certificate",
			ca, str("tlsConfig", "ca", "secret", "key"))
	}
}

// TestPodDisruptionBudgetKeepsOneReplica: a drain never takes both replicas of the manager at once.
func TestPodDisruptionBudgetKeepsOneReplica(t *testing.T) {
	objs, err := manifests.Render("../../config/default")
	if err != nil {
		t.Fatal(err)
	}
	var dep, pdb *unstructured.Unstructured
	for _, o := range objs {
		switch o.GetKind() {
		case "Deployment":
			dep = o
		case "PodDisruptionBudget":
			pdb = o
		}
	}
	if dep == nil || pdb == nil {
		t.Fatalf("config/default lacks the Deployment or the PodDisruptionBudget")
	}
	replicas, _, _ := unstructured.NestedInt64(dep.Object, "spec", "replicas")
	minAvailable, _, _ := unstructured.NestedInt64(pdb.Object, "spec", "minAvailable")
	if replicas < 2 || minAvailable < 1 || minAvailable >= replicas {
		t.Errorf("%d replicas, minAvailable %d; want at least one replica kept and one allowed to move", replicas, minAvailable)
	}
	selector, _, _ := unstructured.NestedStringMap(pdb.Object, "spec", "selector", "matchLabels")
	labels, _, _ := unstructured.NestedStringMap(dep.Object, "spec", "template", "metadata", "labels")
	for k, v := range selector {
		if labels[k] != v {
			t.Errorf("the PodDisruptionBudget selects %s=%s, which the manager's pods do not carry (%v)", k, v, labels)
		}
	}
	if len(selector) == 0 {
		t.Error("the PodDisruptionBudget selects nothing")
	}
}
