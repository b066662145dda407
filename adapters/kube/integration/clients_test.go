// Package integration_test runs the Kubernetes adapters against real API servers (envtest) and the ports' contract
// suites through them. It is a package of its own so that the unit tests of adapters/kube link without the test
// environment: their binary is what each safety mutant of the adapters is judged with, built once per mutant.
package integration_test

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/kube"
)

// secretClients reaches runtimes as the operator does: through kube.RuntimeClients, with kubeconfigs read from the
// Secrets kubeconfig-<runtimeID> in namespace of kcp.
func secretClients(kcp client.Reader, namespace string) kube.RuntimeClientFactory {
	return kube.NewRuntimeClients(kube.RuntimeClientsOptions{Kubeconfigs: kube.SecretKubeconfigs{Reader: kcp, Namespace: namespace}}).Controller
}
