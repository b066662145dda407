package integration_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/kyma-project/kim/adapters/contract"
	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/runtimeconfig"
)

// TestBootstrapSourceContract runs the contract with the controller-runtime fake client standing in for the cache:
// what it checks is how the source reads and judges the objects. TestIntegrationPortContracts runs it again
// through the cache the operator builds, on a real API server.
func TestBootstrapSourceContract(t *testing.T) {
	contract.RunBootstrapSourceContract(t, func(t *testing.T, o contract.BootstrapSourceOptions) contract.BootstrapSourceFixture {
		c := fakeclient.NewClientBuilder().WithScheme(scheme.Scheme).Build()
		return bootstrapSourceFixture(t, c, "kcp-system", o, func(client.ObjectKey, *client.ObjectKey) client.Reader { return c })
	})
}

// failingReader passes reads on until fail is set, then fails them as an unreachable KCP would.
type failingReader struct {
	client.Reader
	fail *atomic.Bool
}

func (r failingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if r.fail.Load() {
		return errors.New("the KCP does not answer")
	}
	return r.Reader.Get(ctx, key, obj, opts...)
}

// bootstrapSourceFixture is a source of the manifests and pull secret in namespace ns, written with c and read with
// the reader reader makes for their keys.
func bootstrapSourceFixture(t *testing.T, c client.Client, ns string, o contract.BootstrapSourceOptions,
	reader func(cm client.ObjectKey, pull *client.ObjectKey) client.Reader) contract.BootstrapSourceFixture {
	t.Helper()
	cm := client.ObjectKey{Namespace: ns, Name: "kim-bootstrap"}
	var pull *client.ObjectKey
	if o.PullSecret {
		pull = &client.ObjectKey{Namespace: ns, Name: "bootstrap-pull"}
	}
	fail := &atomic.Bool{}
	allowed := []runtimeconfig.BootstrapKind{{Kind: "Namespace"}}
	src := &kube.BootstrapSource{Reader: failingReader{Reader: reader(cm, pull), fail: fail}, ConfigMap: cm, PullSecret: pull, Allowed: allowed}
	putManifests := func(t *testing.T, data map[string]string) {
		t.Helper()
		obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: cm.Namespace, Name: cm.Name}}
		_, err := controllerutil.CreateOrUpdate(t.Context(), c, obj, func() error { obj.Data = data; return nil })
		require.NoError(t, err)
	}
	return contract.BootstrapSourceFixture{Source: src, Allowed: allowed,
		PutManifests: func(t *testing.T, objects []runtimeconfig.BootstrapObject) {
			// One file of documents: JSON is YAML, and the source keeps the documents' order.
			docs := make([]string, 0, len(objects))
			for _, obj := range objects {
				docs = append(docs, string(obj.JSON))
			}
			putManifests(t, map[string]string{"manifests.yaml": strings.Join(docs, "\n---\n")})
		},
		PutUnusableManifests: func(t *testing.T) {
			putManifests(t, map[string]string{"broken.yaml": "apiVersion: v1\nkind: ConfigMap\n"})
		},
		RemoveManifests: func(t *testing.T) {
			err := c.Delete(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: cm.Namespace, Name: cm.Name}})
			require.NoError(t, client.IgnoreNotFound(err))
		},
		PutPullSecret: func(t *testing.T, typ string, labels map[string]string, data map[string][]byte) {
			t.Helper()
			require.NotNil(t, pull, "the fixture has no pull secret configured")
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: pull.Namespace, Name: pull.Name, Labels: labels},
				Type: corev1.SecretType(typ), Data: data}
			err := c.Create(t.Context(), s)
			if apierrors.IsAlreadyExists(err) { // the type of a Secret is immutable: replace it
				require.NoError(t, c.Delete(t.Context(), s))
				err = c.Create(t.Context(), s)
			}
			require.NoError(t, err)
		},
		FailReads: func(*testing.T) { fail.Store(true) },
	}
}
