package v1

// Labels KEB sets on every Runtime (docs/keb-contract.md); the operator copies them to the GardenerCluster and Secret.
const (
	LabelInstanceID      = "kyma-project.io/instance-id"
	LabelRuntimeID       = "kyma-project.io/runtime-id"
	LabelBrokerPlanID    = "kyma-project.io/broker-plan-id"
	LabelBrokerPlanName  = "kyma-project.io/broker-plan-name"
	LabelGlobalAccountID = "kyma-project.io/global-account-id"
	LabelSubaccountID    = "kyma-project.io/subaccount-id"
	LabelShootName       = "kyma-project.io/shoot-name"
	LabelRegion          = "kyma-project.io/region"
	LabelProvider        = "kyma-project.io/provider"
	LabelPlatformRegion  = "kyma-project.io/platform-region"
	LabelKymaName        = "operator.kyma-project.io/kyma-name"
	// LabelManagedBy names the component managing an object; KEB-created GardenerClusters carry lifecycle-manager.
	LabelManagedBy = "operator.kyma-project.io/managed-by"
	// LabelUsedForProduction is set by KEB on production runtimes.
	LabelUsedForProduction = "operator.kyma-project.io/used-for-production"
)

// Annotations understood by the operator.
const (
	// AnnotationForceKubeconfigRotation set to "true" on a GardenerCluster issues a new kubeconfig once.
	AnnotationForceKubeconfigRotation = "operator.kyma-project.io/force-kubeconfig-rotation"
	// AnnotationSKRDomain records the runtime's domain on the GardenerCluster.
	AnnotationSKRDomain = "skr-domain"
	// AnnotationSuspendPatchReconciliation set to "true" pauses applying the Runtime's spec to the shoot.
	AnnotationSuspendPatchReconciliation = "operator.kyma-project.io/suspend-patch-reconciliation"
	// AnnotationForcePatchReconciliation set to "true" re-applies the shoot spec once.
	AnnotationForcePatchReconciliation = "operator.kyma-project.io/force-patch-reconciliation"
	// AnnotationExperimentalAuditPolicy set to "true" (any case) points the cluster's audit log at the landscape's
	// experimental audit policy ConfigMap instead of the configured one, as the previous infrastructure manager does.
	AnnotationExperimentalAuditPolicy = "operator.kyma-project.io/experimental-audit-policy"
	// AnnotationRestored is set to "true" on a Runtime re-created from the record of its shoot pending deletion
	// (kim restore, or the restore request on the shoot). It is informational: a Runtime with the ID of the record
	// takes its cluster back whether it carries it or not.
	AnnotationRestored = "infrastructuremanager.kyma-project.io/restore"
	// AnnotationSyncRegistryCache: changing its value (any value, e.g. a timestamp) makes the operator read the
	// runtime's RegistryCacheConfig objects at once instead of at the next periodic sync.
	AnnotationSyncRegistryCache = "infrastructuremanager.kyma-project.io/sync-registry-cache"
)

// FieldManagerRegistryCache is the server-side apply field manager that owns spec.imageRegistryCache of Runtimes: the
// operator writes the field from the customer's RegistryCacheConfig objects and never touches the fields KEB owns.
const FieldManagerRegistryCache = "kim-registry-cache"

// Condition types and the Ready condition shared by both kinds.
const (
	// ConditionReady summarises whether the object reached its desired state.
	ConditionReady = "Ready"
	// ConditionKubeconfigManagement reports issuing and rotating the kubeconfig of a GardenerCluster.
	ConditionKubeconfigManagement = "KubeconfigManagement"
	// ConditionReconciling and ConditionStalled are kstatus' abnormal-true conditions (sigs.k8s.io/cli-utils
	// kstatus), present only while true: Reconciling while the operator works towards the desired state
	// (Pending), Stalled when it cannot get there without a change (Failed). Flux, Argo CD and kpt health checks
	// read them.
	ConditionReconciling = "Reconciling"
	ConditionStalled     = "Stalled"
)
