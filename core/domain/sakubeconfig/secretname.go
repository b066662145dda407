package sakubeconfig

import (
	"fmt"
	"strings"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
)

// OperatorSecretPrefix starts the names of Secrets the operator itself may create in a KCP namespace (its Gardener
// kubeconfig, registry-cache ledgers, those of future features). A request never takes such a name: if it got there
// first, the operator would find its own Secret written by a request (and refuse to touch it, or trust it).
const OperatorSecretPrefix = "kim-"

// checkSecretName refuses a Secret name reserved for admin kubeconfigs (kubeconfig.SecretNamePrefix), of any
// runtime, not only the request's: whoever reads kubeconfig-<runtimeID> trusts it to be that runtime's admin
// kubeconfig, and a request that got there first (before the runtime's GardenerCluster, or after its deletion)
// would hand them a kubeconfig of its own choosing and keep the GardenerCluster from ever writing its Secret. It
// also refuses the operator's own names (OperatorSecretPrefix). Admission refuses the same (the CEL rules on
// spec.secretName); this check also holds for objects admitted before those rules existed.
func checkSecretName(name string) error {
	invalid := func(prefix, whose string) error {
		return &Refusal{Field: "spec.secretName", Code: CodeInvalid, kind: ErrInvalid, Detail: fmt.Sprintf(
			"%q is refused: names starting with %q are %s; choose another name", name, prefix, whose)}
	}
	switch {
	case strings.HasPrefix(name, kubeconfig.SecretNamePrefix):
		return invalid(kubeconfig.SecretNamePrefix, "the admin kubeconfig Secrets of runtimes")
	case strings.HasPrefix(name, OperatorSecretPrefix):
		return invalid(OperatorSecretPrefix, "Secrets the operator itself may create")
	}
	return nil
}
