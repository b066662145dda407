// Package wire holds the names other systems see and rely on (KEB, lifecycle-manager, Gardener, people with
// kubectl), defined once for the whole module: the managed-by mark on everything the operator writes, the restore
// annotation and the garden namespace of a project. The kubeconfig Secret's name and format are in
// core/domain/kubeconfig. The public API module (operator/api) cannot import this package and repeats the names it
// documents; operator/app/wire_test.go keeps them equal.
package wire

// LabelManagedBy marks everything the operator writes: kubeconfig Secrets and the deletion guard in the KCP, shoots
// and their ConfigMaps in the garden. The operator's caches hold only objects with it, and a shoot without it is
// never changed.
const LabelManagedBy = "operator.kyma-project.io/managed-by"

// ManagedByValue is LabelManagedBy's value on everything the operator writes.
const ManagedByValue = "infrastructure-manager"

// LabelInternal set to "true" marks a GardenerCluster the infrastructure manager created (not KEB); the previous
// infrastructure manager set it with LabelManagedBy on every GardenerCluster it created.
const LabelInternal = "operator.kyma-project.io/internal"

// AnnotationRestore set to "true" on a shoot pending deletion asks the operator to bring its Runtime back; on a
// Runtime it records that the Runtime was re-created from that record (kim restore).
const AnnotationRestore = "infrastructuremanager.kyma-project.io/restore"

// GardenNamespace is the namespace of a Gardener project: where its shoots live.
func GardenNamespace(project string) string { return "garden-" + project }
