package runtimeconfig

// Reason is a stable reason of a runtime configuration condition. Values never change meaning: dashboards written
// for the previous infrastructure manager match on them.
type Reason string

// Reasons of the conditions KymaSystemNSCreated, OidcAndConfigMapConfigured, Configured and Bootstrapped.
const (
	// ReasonRuntimeAPIServerUnreachable: the runtime's API server did not answer within the timeout (or its
	// kubeconfig is missing); retried with backoff.
	ReasonRuntimeAPIServerUnreachable Reason = "RuntimeAPIServerUnreachable"

	ReasonKymaSystemNSReady Reason = "KymaSystemNSReady"
	ReasonKymaSystemNSError Reason = "KymaSystemNSError"

	ReasonOidcAndConfigMapsConfigured Reason = "OidcAndConfigMapsConfigured"
	// ReasonConfigMapError: the kyma-provisioning-info ConfigMap could not be written.
	ReasonConfigMapError Reason = "ConfigMapErr"
	// ReasonOidcError: an OpenIDConnect resource could not be written or removed.
	ReasonOidcError Reason = "OidcConfigurationErr"
	// ReasonOIDCNotServed: the runtime does not serve OpenIDConnect resources (yet): shoot-oidc-service has not
	// installed its CRD. Retried; Gardener installs it while reconciling the shoot.
	ReasonOIDCNotServed Reason = "OpenIDConnectNotServed"

	ReasonAdministratorsConfigured Reason = "AdministratorsConfigured"
	// ReasonAdministratorNamesReserved: the other administrators are bound; some names were not, being empty or
	// reserved by Kubernetes (system:...). It holds nothing up.
	ReasonAdministratorNamesReserved Reason = "AdministratorNamesReserved"
	// ReasonConfigurationError: an administrator's ClusterRoleBinding could not be written or removed.
	ReasonConfigurationError Reason = "ConfigurationError"

	ReasonBootstrapCompleted Reason = "BootstrapCompleted"
	// ReasonBootstrapInProgress: the manifests are applied, some Deployments are not available yet.
	ReasonBootstrapInProgress Reason = "BootstrapInProgress"
	// ReasonBootstrapManifestsInvalid: the landscape's manifests cannot be used (or the runtime refused one);
	// nothing waits for them.
	ReasonBootstrapManifestsInvalid Reason = "BootstrapManifestsInvalid"
	// ReasonBootstrapFailed: applying the manifests failed on the way; retried.
	ReasonBootstrapFailed Reason = "BootstrapFailed"
	// ReasonBootstrapWaitingForWave: the manifests changed and are rolled out in waves; this runtime's wave is not
	// admitted yet (or the rollout stopped). It keeps what it has; nothing waits for it.
	ReasonBootstrapWaitingForWave Reason = "BootstrapWaitingForWave"
)

// Outcome is what happened to one part of the configuration.
type Outcome struct {
	// Done is true when the part holds the desired state.
	Done bool
	// Skipped is true when the part was not attempted (an earlier problem, or nothing to do); Done says whether
	// that is fine.
	Skipped bool
	Reason  Reason
	Message string
	// Permanent marks a refusal that repeating cannot fix (the runtime rejected an object as invalid).
	Permanent bool
}

// Result reports a Configure call part by part.
type Result struct {
	Namespace        Outcome
	ProvisioningInfo Outcome
	OIDC             Outcome
	Administrators   Outcome
	// Bootstrap is the zero Outcome when no bootstrap is configured.
	Bootstrap Outcome
}

// Problem returns the first part that keeps the configuration from being complete, in the order a person should
// look at them; nil when it is complete. Invalid or refused bootstrap manifests hold nothing up, and neither does a
// runtime waiting for its wave of a changed set.
func (r Result) Problem() *Outcome {
	for _, o := range []*Outcome{&r.Namespace, &r.ProvisioningInfo, &r.OIDC, &r.Administrators} {
		if !o.Done {
			return o
		}
	}
	if !r.Bootstrap.Done && r.Bootstrap.Reason != "" && !HoldsNothingUp(r.Bootstrap.Reason) {
		return &r.Bootstrap
	}
	return nil
}

// Done returns the outcome of a part that holds the desired state.
func Done(reason Reason, message string) Outcome {
	return Outcome{Done: true, Reason: reason, Message: message}
}

// Failed returns the outcome of a part that does not hold the desired state.
func Failed(reason Reason, message string) Outcome {
	return Outcome{Reason: reason, Message: message}
}
