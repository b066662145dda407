package gardenbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	authenticationv1alpha1 "github.com/gardener/gardener/pkg/apis/authentication/v1alpha1"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// File names written by WriteKubeconfigs.
const (
	KCPKubeconfigFile    = "kcp.kubeconfig"
	GardenKubeconfigFile = "garden.kubeconfig"
)

// WriteKubeconfigs writes DIR/kcp.kubeconfig and DIR/garden.kubeconfig (admin access, mode 0600).
func (e *Env) WriteKubeconfigs(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	for file, cfg := range map[string]*rest.Config{KCPKubeconfigFile: e.KCP, GardenKubeconfigFile: e.Garden} {
		data, err := Kubeconfig(cfg, "sandbox-"+file[:len(file)-len(".kubeconfig")])
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, file), data, 0o600); err != nil {
			return fmt.Errorf("write %s: %w", file, err)
		}
	}
	return nil
}

// Kubeconfig renders a rest.Config (with certificate data) as a kubeconfig file with one context; an
// impersonating config stays one (the user and groups it acts as).
func Kubeconfig(cfg *rest.Config, name string) ([]byte, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken,
		Impersonate: cfg.Impersonate.UserName, ImpersonateGroups: cfg.Impersonate.Groups}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	kc.CurrentContext = name
	data, err := clientcmd.Write(*kc)
	if err != nil {
		return nil, fmt.Errorf("render kubeconfig %s: %w", name, err)
	}
	return data, nil
}

// AdminKubeconfig requests a kubeconfig for the shoot through the real gardener-apiserver
// (`shoots/adminkubeconfig`), exactly as the operator does.
func (e *Env) AdminKubeconfig(ctx context.Context, namespace, shoot string, expirationSeconds int64) ([]byte, error) {
	req := &authenticationv1alpha1.AdminKubeconfigRequest{Spec: authenticationv1alpha1.AdminKubeconfigRequestSpec{ExpirationSeconds: ptr.To(expirationSeconds)}}
	s := &gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{Name: shoot, Namespace: namespace}}
	if err := e.GardenClient.SubResource("adminkubeconfig").Create(ctx, s, req); err != nil {
		return nil, fmt.Errorf("request admin kubeconfig of shoot %s/%s: %w", namespace, shoot, err)
	}
	return req.Status.Kubeconfig, nil
}

// RuntimeConfig returns an admin rest.Config of the runtime API server behind a shoot. It fails with
// runtimeapi.ErrNoServer when the environment runs without runtime API servers or the shoot has none yet.
func (e *Env) RuntimeConfig(namespace, shoot string) (*rest.Config, error) {
	return e.Runtimes.AdminConfig(namespace + "/" + shoot)
}

// RuntimeClient is RuntimeConfig as a controller-runtime client with the client-go scheme.
func (e *Env) RuntimeClient(namespace, shoot string) (client.Client, error) {
	cfg, err := e.RuntimeConfig(namespace, shoot)
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{})
}
