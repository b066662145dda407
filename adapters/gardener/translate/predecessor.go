package translate

import "github.com/kyma-project/kim/core/domain/shoot"

// Annotations of the provisioner that preceded the previous infrastructure manager. Its shoots name their runtime
// with AnnotationProvisionerRuntimeID instead of shoot.AnnotationRuntimeID; the operator reads both (see
// RuntimeIDOf) and writes only its own.
const (
	AnnotationProvisionerRuntimeID   = "kcp.provisioner.kyma-project.io/runtime-id"
	AnnotationProvisionerLicenceType = "kcp.provisioner.kyma-project.io/licence-type"
)

// Predecessor names the system that created a shoot, as far as its annotations tell.
type Predecessor string

// Predecessors RuntimeIDOf recognises.
const (
	// PredecessorNone: the shoot names no runtime.
	PredecessorNone Predecessor = ""
	// PredecessorInfrastructureManager: the previous infrastructure manager (or this operator): the
	// infrastructuremanager.kyma-project.io/runtime-id annotation.
	PredecessorInfrastructureManager Predecessor = "infrastructure-manager"
	// PredecessorProvisioner: the provisioner before it: the kcp.provisioner.kyma-project.io/runtime-id annotation.
	PredecessorProvisioner Predecessor = "provisioner"
)

// RuntimeIDOf returns the runtime a shoot was created for and by which system. The infrastructure manager's
// annotation wins: a shoot the previous infrastructure manager took over from the provisioner carries both.
func RuntimeIDOf(annotations map[string]string) (string, Predecessor) {
	if id := annotations[shoot.AnnotationRuntimeID]; id != "" {
		return id, PredecessorInfrastructureManager
	}
	if id := annotations[AnnotationProvisionerRuntimeID]; id != "" {
		return id, PredecessorProvisioner
	}
	return "", PredecessorNone
}
