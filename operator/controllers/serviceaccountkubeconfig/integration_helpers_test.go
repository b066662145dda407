package serviceaccountkubeconfig_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/wire"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// reader reads a kubeconfig Secret from the KCP and lists pods with it, over and over, as a consumer would.
type reader struct {
	cancel        context.CancelFunc
	wg            sync.WaitGroup
	reads, failed atomic.Int64
}

// startReader starts a reader; it stops when stop is called or the test ends.
func startReader(t *testing.T, w *world, secret string) *reader {
	ctx, cancel := context.WithCancel(context.Background())
	r := &reader{cancel: cancel}
	r.wg.Go(func() {
		for ctx.Err() == nil {
			var s corev1.Secret
			err := w.kcp.Get(ctx, client.ObjectKey{Namespace: kcpNamespace, Name: secret}, &s)
			if err == nil {
				var cs kubernetes.Interface
				if cs, err = consumer(s.Data["config"]); err == nil {
					_, err = cs.CoreV1().Pods("kyma-system").List(ctx, metav1.ListOptions{})
				}
			}
			if ctx.Err() != nil {
				return
			}
			r.reads.Add(1)
			if err != nil {
				r.failed.Add(1)
				t.Logf("reader: %v", err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	t.Cleanup(func() { r.stop() })
	return r
}

func (r *reader) stop() (reads, failed int64) {
	r.cancel()
	r.wg.Wait()
	return r.reads.Load(), r.failed.Load()
}

// touch changes an annotation of the object: the operator looks at it at once.
func touch(t *testing.T, w *world, name string) {
	t.Helper()
	patch := []byte(`{"metadata":{"annotations":{"test.kim/touched":"` + time.Now().Format(time.RFC3339Nano) + `"}}}`)
	s := &imv1.ServiceAccountKubeconfig{ObjectMeta: metav1.ObjectMeta{Namespace: kcpNamespace, Name: name}}
	if err := w.kcp.Patch(context.Background(), s, client.RawPatch("application/merge-patch+json", patch)); err != nil {
		t.Fatal(err)
	}
}

func readyMessage(s *imv1.ServiceAccountKubeconfig) string {
	if s == nil {
		return "gone"
	}
	for _, c := range s.Status.Conditions {
		if c.Type == imv1.ConditionReady {
			return c.Message
		}
	}
	return ""
}

// tokenOf reads the bearer token of a kubeconfig.
func tokenOf(t *testing.T, kc []byte) string {
	t.Helper()
	cfg, err := clientcmd.Load(kc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := cfg.Contexts[cfg.CurrentContext]
	if ctx == nil || cfg.AuthInfos[ctx.AuthInfo] == nil {
		t.Fatal("kubeconfig without current context or user")
	}
	return cfg.AuthInfos[ctx.AuthInfo].Token
}

// putAdminKubeconfig stores an admin kubeconfig Secret for runtimeID that names server, as the GardenerCluster
// controller would (with the CA of the real runtime: the client tries the TLS handshake, which never completes).
func (w *world) putAdminKubeconfig(t *testing.T, runtimeID, server string) {
	t.Helper()
	real, err := clientcmd.Load(w.secret(t, "kubeconfig-"+runtimeIDOfTest).Data["config"])
	if err != nil {
		t.Fatal(err)
	}
	var ca []byte
	for _, c := range real.Clusters {
		ca = c.CertificateAuthorityData
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "admin"}
	cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "c"
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: kcpNamespace, Name: "kubeconfig-" + runtimeID,
		Labels: map[string]string{wire.LabelManagedBy: wire.ManagedByValue}}, Data: map[string][]byte{"config": data}}
	if err := w.kcp.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
}

// hasEvent reports whether an event with reason was recorded for the ServiceAccountKubeconfig name.
func (w *world) hasEvent(t *testing.T, name, reason string) bool {
	t.Helper()
	var list eventsv1.EventList
	if err := w.kcp.List(context.Background(), &list, client.InNamespace(kcpNamespace)); err != nil {
		t.Fatal(err)
	}
	for _, e := range list.Items {
		if e.Regarding.Name == name && e.Reason == reason {
			return true
		}
	}
	return false
}

func errString(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}
