package shoot

import (
	"errors"
	"fmt"
)

// Reason is a stable, machine-readable cause of a validation failure. Controllers copy it into
// condition reasons, so existing values must never change meaning.
type Reason string

// Stable validation reasons.
const (
	ReasonMissingField             Reason = "MissingField"
	ReasonInvalidName              Reason = "InvalidName"
	ReasonInvalidLabel             Reason = "InvalidLabel"
	ReasonInvalidPurpose           Reason = "InvalidPurpose"
	ReasonUnsupportedProvider      Reason = "UnsupportedProvider"
	ReasonProviderNotSupportedYet  Reason = "ProviderNotSupportedYet"
	ReasonInvalidKubernetesVersion Reason = "InvalidKubernetesVersion"
	ReasonInvalidCIDR              Reason = "InvalidCIDR"
	ReasonNodesPrefixOutOfRange    Reason = "NodesPrefixOutOfRange"
	ReasonOverlappingCIDRs         Reason = "OverlappingCIDRs"
	ReasonTooManyZones             Reason = "TooManyZones"
	ReasonNoZones                  Reason = "NoZones"
	ReasonZoneNotInRegion          Reason = "ZoneNotInRegion"
	ReasonInvalidWorker            Reason = "InvalidWorker"
	ReasonDuplicateWorker          Reason = "DuplicateWorker"
	ReasonInvalidOIDC              Reason = "InvalidOIDC"
	ReasonInvalidACL               Reason = "InvalidACL"
	ReasonInvalidHighAvailability  Reason = "InvalidHighAvailability"
	ReasonAuditLogTenantMissing    Reason = "AuditLogTenantMissing"
	ReasonInvalidRegistryCache     Reason = "InvalidRegistryCache"
	// ReasonForeignRegistryCredentials: a registry cache names a Secret of the Gardener project that is not a copy
	// of registry credentials made for this runtime (reg-cache-*, labelled with its runtime ID). Passing it on would
	// hand another customer's credentials, or the project's cloud credentials, to this cluster.
	ReasonForeignRegistryCredentials Reason = "ForeignRegistryCredentials"
	ReasonInvalidConfig              Reason = "InvalidConfig"
	ReasonNoFreeZoneCIDR             Reason = "NoFreeZoneCIDR"
	// ReasonOIDCExtensionDisabled: a Runtime has customer OIDC issuers but the landscape turns shoot-oidc-service,
	// which serves them, off (shoot.oidcExtension=never).
	ReasonOIDCExtensionDisabled Reason = "OIDCExtensionDisabled"
	// ReasonACLOperatorAddressesMissing: a Runtime restricts API server access but the operator's and KCP's egress
	// addresses are not known; applying it would lock the control plane out.
	ReasonACLOperatorAddressesMissing Reason = "ACLOperatorAddressesMissing"
	// ReasonNoZonesInCloudProfile: a worker pool came without zones (KEB sends that when its providers configuration
	// lists none for the region) and the cluster's cloud profile offers none for the region either, so the operator
	// has nothing to fill in. The landscape adds the region's zones to the cloud profile (or KEB's configuration).
	ReasonNoZonesInCloudProfile Reason = "NoZonesInCloudProfile"
)

// ValidationError says which input field is wrong, why (Reason) and what to do (Message).
type ValidationError struct {
	Reason  Reason
	Field   string // path in the Runtime (e.g. "spec.shoot.networking.nodes") or config key
	Message string
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("%s: %s (%s)", e.Field, e.Message, e.Reason)
}

func invalid(reason Reason, field, format string, args ...any) *ValidationError {
	return &ValidationError{Reason: reason, Field: field, Message: fmt.Sprintf(format, args...)}
}

// AsValidationError returns the first *ValidationError in err's chain, or nil.
func AsValidationError(err error) *ValidationError {
	var ve *ValidationError
	if errors.As(err, &ve) {
		return ve
	}
	return nil
}
