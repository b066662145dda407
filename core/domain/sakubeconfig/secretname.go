package sakubeconfig

import (
	"fmt"
	"strings"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
)

// checkSecretName refuses a Secret name reserved for admin kubeconfigs (kubeconfig.SecretNamePrefix), of any
// runtime, not only the request's: whoever reads kubeconfig-<runtimeID> trusts it to be that runtime's admin
// kubeconfig, and a request that got there first (before the runtime's GardenerCluster, or after its deletion)
// would hand them a kubeconfig of its own choosing and keep the GardenerCluster from ever writing its Secret.
// Admission refuses the same (the CEL rule on spec.secretName); this check also holds for objects admitted before
// that rule existed.
func checkSecretName(name string) error {
	if strings.HasPrefix(name, kubeconfig.SecretNamePrefix) {
		return &Refusal{Field: "spec.secretName", kind: ErrInvalid, Detail: fmt.Sprintf(
			"%q is refused: names starting with %q are the admin kubeconfig Secrets of runtimes; choose another name",
			name, kubeconfig.SecretNamePrefix)}
	}
	return nil
}
