package kube_test

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/kube"
)

// secretClients reaches runtimes as the operator does: through kube.RuntimeClients, with kubeconfigs read from the
// Secrets kubeconfig-<runtimeID> in namespace of kcp.
func secretClients(kcp client.Reader, namespace string) kube.RuntimeClientFactory {
	return kube.NewRuntimeClients(kube.RuntimeClientsOptions{Kubeconfigs: kube.SecretKubeconfigs{Reader: kcp, Namespace: namespace}}).Controller
}
