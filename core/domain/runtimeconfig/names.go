package runtimeconfig

import "github.com/kyma-project/kim/core/domain/wire"

// Names and labels inside every runtime. They are those of the system the operator replaces, so what it left behind
// is adopted, and consumers (lifecycle-manager, istio, dashboards) find what they always found.
const (
	// Namespace is created in every runtime and never deleted by the operator.
	Namespace = "kyma-system"
	// ProvisioningInfoName is the ConfigMap in Namespace that describes the runtime; ProvisioningInfoKey holds the
	// YAML document (docs/runtime-configuration.md is its contract).
	ProvisioningInfoName = "kyma-provisioning-info"
	ProvisioningInfoKey  = "details"

	// LabelManagedBy marks the ClusterRoleBindings and the ConfigMap the operator keeps; only bindings with it are
	// ever deleted.
	LabelManagedBy = "reconciler.kyma-project.io/managed-by"
	// LabelOIDCManagedBy marks the OpenIDConnect resources the operator keeps (the operator's own mark, as on
	// everything it writes in KCP and the garden); only resources with it are ever deleted.
	LabelOIDCManagedBy = wire.LabelManagedBy
	// ManagedByValue is the value of both labels.
	ManagedByValue = wire.ManagedByValue

	// OIDCNamePrefix names the OpenIDConnect resources: kyma-oidc-<n>, n the issuer's position.
	OIDCNamePrefix = "kyma-oidc-"
	// AdminBindingPrefix names the administrators' bindings: admin-<hash of the user>.
	AdminBindingPrefix = "admin-"
	// ClusterAdminRole is the ClusterRole administrators are bound to.
	ClusterAdminRole = "cluster-admin"
	// FieldManager is the server-side apply field manager of the operator.
	FieldManager = "kim"
)
