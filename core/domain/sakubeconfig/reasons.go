package sakubeconfig

// Stable reasons of ServiceAccountKubeconfigs: the Ready condition's reason, and the reason of the event recorded
// when something happened. People, alerts and consumers (kubectl wait) match on them.
const (
	// Ready.
	ReasonKubeconfigIssued  = "KubeconfigIssued"
	ReasonKubeconfigRotated = "KubeconfigRotated"
	ReasonKubeconfigValid   = "KubeconfigValid"
	ReasonRulesApplied      = "RulesApplied"
	// Not ready; the operator retries on its own.
	ReasonWaitingForRuntime   = "WaitingForRuntime"
	ReasonRuntimeUnreachable  = "RuntimeUnreachable"
	ReasonClusterRoleNotFound = "ClusterRoleNotFound"
	ReasonApplyFailed         = "ApplyFailed"
	ReasonTokenRequestFailed  = "TokenRequestFailed"
	ReasonSecretWriteFailed   = "SecretWriteFailed"
	// Not ready until a person changes the request or the clash it names.
	ReasonEscalationRefused = "EscalationRefused"
	ReasonInvalidRequest    = "InvalidRequest"
	ReasonSecretNotOwned    = "SecretNotOwned"
	ReasonObjectNotOwned    = "RuntimeObjectNotOwned"
	// Events only.
	EventAccessRevoked            = "AccessRevoked"
	EventRuntimeObjectsRemoved    = "RuntimeObjectsRemoved"
	EventRuntimeObjectsLeftBehind = "RuntimeObjectsLeftBehind"
)

// WaitsForAPerson reports whether a not-ready reason stays until a person changes the request, the landscape
// configuration or the clash it names (kstatus Stalled); every other not-ready reason is retried by the operator on
// its own (kstatus Reconciling).
func WaitsForAPerson(reason string) bool {
	switch reason {
	case ReasonEscalationRefused, ReasonInvalidRequest, ReasonSecretNotOwned, ReasonObjectNotOwned:
		return true
	}
	return false
}
