package manifests_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

const operatorUser = "system:serviceaccount:kcp-system:kim-controller-manager"

// TestIntegrationAuditPolicy starts a kube-apiserver with config/audit/kcp-audit-policy.yaml and acts as KEB, as
// the operator and as a person: every change of a Runtime, GardenerCluster or kcp-system Secret and every read of
// the Gardener credentials is in the audit log with the user who did it, at Metadata level (no object bodies, so no
// kubeconfig, credential or e-mail address); the operator's status writes and unrelated reads are not.
func TestIntegrationAuditPolicy(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "audit.log")
	policy, err := filepath.Abs(repoPath("config", "audit", "kcp-audit-policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	k := startKCP(t, func(env *envtest.Environment) {
		env.CRDDirectoryPaths = []string{repoPath("config", "crd", "bases")}
		env.ErrorIfCRDPathMissing = true
		env.ControlPlane.GetAPIServer().Configure().
			Set("audit-policy-file", policy).
			Set("audit-log-path", logPath).
			Set("audit-log-format", "json")
	})
	ctx := context.Background()
	as := func(name string) client.Client {
		u, err := k.env.AddUser(envtest.User{Name: name, Groups: []string{"system:masters"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		c, err := client.New(u.Config(), client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	keb, operator, alice := as("keb"), as(operatorUser), as("alice@example.com")
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	must("namespace", keb.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: kcpNamespace}}))

	rt := kebRuntime(t)
	id := rt.GetName()
	must("KEB creates the Runtime", keb.Create(ctx, rt))
	must("the operator writes its status", operator.Status().Patch(ctx, rt.DeepCopy(),
		client.RawPatch(types.MergePatchType, []byte(`{"status":{"state":"Pending"}}`))))
	must("a person labels the Runtime", alice.Patch(ctx, rt.DeepCopy(),
		client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"debug":"true"}}}`))))
	gardenCreds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kim-gardener-kubeconfig", Namespace: kcpNamespace},
		StringData: map[string]string{"kubeconfig": "SECRET-GARDEN-TOKEN"}}
	must("the platform team stores the Gardener credentials", keb.Create(ctx, gardenCreds))
	kubeconfig := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kubeconfig-" + id, Namespace: kcpNamespace},
		StringData: map[string]string{"config": "SECRET-ADMIN-KUBECONFIG"}}
	must("the operator writes a kubeconfig", operator.Create(ctx, kubeconfig))
	must("a person reads the Gardener credentials", alice.Get(ctx, client.ObjectKeyFromObject(gardenCreds), &corev1.Secret{}))
	must("a person lists the Secrets", alice.List(ctx, &corev1.SecretList{}, client.InNamespace(kcpNamespace)))
	must("an unrelated read", alice.List(ctx, &corev1.ConfigMapList{}, client.InNamespace(kcpNamespace)))
	gc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": imv1.GroupVersion.String(), "kind": "GardenerCluster",
		"metadata": map[string]any{"name": id, "namespace": kcpNamespace},
		"spec": map[string]any{"shoot": map[string]any{"name": "c-91f0e7a"},
			"kubeconfig": map[string]any{"secret": map[string]any{"name": kubeconfig.Name, "namespace": kcpNamespace, "key": "config"}}},
	}}
	must("the operator creates the GardenerCluster", operator.Create(ctx, gc))
	must("KEB deletes the GardenerCluster", keb.Delete(ctx, gc))

	type want struct{ user, verb, resource, subresource, name string }
	expected := []want{
		{"keb", "create", "runtimes", "", id},
		{"alice@example.com", "patch", "runtimes", "", id},
		{"keb", "create", "secrets", "", "kim-gardener-kubeconfig"},
		{operatorUser, "create", "secrets", "", kubeconfig.Name},
		{"alice@example.com", "get", "secrets", "", "kim-gardener-kubeconfig"},
		{"alice@example.com", "list", "secrets", "", ""},
		{operatorUser, "create", "gardenerclusters", "", id},
		{"keb", "delete", "gardenerclusters", "", id},
	}
	key := func(w want) string {
		return fmt.Sprintf("%s %s %s/%s %s", w.user, w.verb, w.resource, w.subresource, w.name)
	}
	var events []auditv1.Event
	deadline := time.Now().Add(15 * time.Second)
	for {
		events = readAudit(t, logPath)
		seen := map[string]bool{}
		for _, e := range events {
			if e.ObjectRef != nil {
				seen[key(want{e.User.Username, e.Verb, e.ObjectRef.Resource, e.ObjectRef.Subresource, e.ObjectRef.Name})] = true
			}
		}
		var missing []string
		for _, w := range expected {
			if !seen[key(w)] {
				missing = append(missing, key(w))
			}
		}
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not in the audit log: %v", missing)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, e := range events {
		if e.ObjectRef == nil {
			continue
		}
		ref := e.ObjectRef
		if e.Level != "Metadata" {
			t.Errorf("%s %s %s logged at level %s; the policy logs only metadata", e.User.Username, e.Verb, ref.Resource, e.Level)
		}
		if e.RequestObject != nil || e.ResponseObject != nil {
			t.Errorf("%s %s %s/%s carries an object body", e.User.Username, e.Verb, ref.Resource, ref.Name)
		}
		if ref.Resource == "configmaps" {
			t.Errorf("an unrelated read is in the audit log: %s %s configmaps", e.User.Username, e.Verb)
		}
		if ref.Subresource == "status" && e.User.Username == operatorUser {
			t.Errorf("the operator's status write is in the audit log: %s %s/status", e.Verb, ref.Resource)
		}
	}
	data, err := os.ReadFile(logPath)
	must("read audit log", err)
	for _, secret := range []string{"SECRET-GARDEN-TOKEN", "SECRET-ADMIN-KUBECONFIG", "U0VDUkVU" /* base64 of SECRET */} {
		if strings.Contains(string(data), secret) {
			t.Errorf("the audit log contains secret material %q", secret)
		}
	}
}

func readAudit(t *testing.T, path string) []auditv1.Event {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var out []auditv1.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e auditv1.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			continue // a line being written
		}
		out = append(out, e)
	}
	return out
}
