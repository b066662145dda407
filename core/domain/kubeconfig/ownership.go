package kubeconfig

import (
	"errors"
	"fmt"
)

// Errors of the ownership checks: what a GardenerCluster may not make the operator do. Each is a refusal with a
// stable reason, never a retry that could succeed without a person changing something.
var (
	// ErrSecretOtherNamespace: the GardenerCluster names a Secret outside its own namespace.
	ErrSecretOtherNamespace = errors.New("the kubeconfig Secret must be in the GardenerCluster's own namespace")
	// ErrSecretNotOwned: the Secret exists and belongs to someone else (another GardenerCluster or
	// ServiceAccountKubeconfig, or it is not a Secret the operator wrote for the resource acting on it). The
	// operator neither overwrites nor deletes it. The wrapping error names the Secret and its owner.
	ErrSecretNotOwned = errors.New("the Secret exists and does not belong to the resource acting on it")
	// ErrSecretName: the GardenerCluster names an absent Secret other than kubeconfig-<its name>. It may create
	// only its own runtime's kubeconfig Secret; a Secret of another name works only while it exists and was written
	// for it (or is its legacy Secret).
	ErrSecretName = errors.New("a new kubeconfig Secret must be named kubeconfig-<name of the GardenerCluster>")
	// ErrShootOfAnotherRuntime: the shoot was created for another runtime than the GardenerCluster's.
	ErrShootOfAnotherRuntime = errors.New("the shoot belongs to another runtime")
	// ErrShootPendingDeletion: the shoot waits for deletion; its runtime was deleted.
	ErrShootPendingDeletion = errors.New("the shoot belongs to a deleted runtime and waits for deletion")
)

// SecretVerdict is what a GardenerCluster may do with the Secret it names.
type SecretVerdict int

// Verdicts of CheckClusterSecret.
const (
	// SecretAbsent: the Secret does not exist; it may be created.
	SecretAbsent SecretVerdict = iota
	// SecretOwned: the Secret was written for this GardenerCluster; it may be replaced and deleted.
	SecretOwned
	// SecretLegacy: the kubeconfig Secret KEB created for this runtime before the operator managed it
	// (kubeconfig-<runtimeID>, no owner); it may be taken over by writing it (which records the owner).
	SecretLegacy
)

// ExistingSecret is what CheckClusterSecret needs to know of a Secret that exists.
type ExistingSecret struct {
	Name        string
	Labels      map[string]string
	Annotations map[string]string
}

// CheckClusterSecret decides whether GardenerCluster clusterNamespace/clusterName may write the kubeconfig Secret
// secretNamespace/secretName it names (existing is nil when the Secret does not exist; otherwise existing.Name is
// secretName). A GardenerCluster is written by whoever may create one in the KCP: it must not be able to make the
// operator overwrite or delete another runtime's kubeconfig, or any other Secret, nor create a Secret under a name
// someone else relies on (another runtime's kubeconfig before its GardenerCluster writes it, another team's before
// they do). The Secrets of ServiceAccountKubeconfigs have their own rule, sakubeconfig.CheckRequestSecret.
func CheckClusterSecret(clusterNamespace, clusterName, secretNamespace, secretName string, existing *ExistingSecret) (SecretVerdict, error) {
	if secretNamespace != clusterNamespace {
		return 0, fmt.Errorf("%w: spec.kubeconfig.secret.namespace is %q, the GardenerCluster is in %q", ErrSecretOtherNamespace, secretNamespace, clusterNamespace)
	}
	if existing == nil {
		return checkNewSecretName(clusterName, secretNamespace, secretName)
	}
	owner, hasOwner := existing.Annotations[AnnotationOwner]
	switch {
	case hasOwner && owner == clusterNamespace+"/"+clusterName:
		return SecretOwned, nil
	case hasOwner:
		return 0, fmt.Errorf("%w: Secret %s/%s belongs to GardenerCluster %s", ErrSecretNotOwned, secretNamespace, existing.Name, owner)
	}
	// Without an owner it is the runtime's own kubeconfig Secret only by its name, and only if nothing in it names
	// another runtime.
	if existing.Name != SecretName(clusterName) {
		return 0, fmt.Errorf("%w: Secret %s/%s is not the kubeconfig Secret of runtime %s (%s)", ErrSecretNotOwned,
			secretNamespace, existing.Name, clusterName, SecretName(clusterName))
	}
	for _, key := range []string{LabelRuntimeID, LabelClusterName} {
		if v, ok := existing.Labels[key]; ok && v != clusterName {
			return 0, fmt.Errorf("%w: Secret %s/%s is labelled %s=%s", ErrSecretNotOwned, secretNamespace, existing.Name, key, v)
		}
	}
	return SecretLegacy, nil
}

// checkNewSecretName allows creating only the GardenerCluster's own kubeconfig Secret, kubeconfig-<clusterName>.
func checkNewSecretName(clusterName, secretNamespace, secretName string) (SecretVerdict, error) {
	if secretName != SecretName(clusterName) {
		return 0, fmt.Errorf("%w: Secret %s/%s does not exist and is not %s", ErrSecretName, secretNamespace, secretName, SecretName(clusterName))
	}
	return SecretAbsent, nil
}

// ShootIdentity is what CheckShoot needs to know of the shoot a GardenerCluster names.
type ShootIdentity struct {
	Ref ShootRef
	// RuntimeID is the runtime the shoot was created for: its runtime-id annotation, this operator's and the
	// previous infrastructure manager's, or the provisioner's before them (adapters/gardener/translate.RuntimeIDOf).
	// Empty when the shoot names no runtime: such a shoot is nobody's, and no GardenerCluster gets its kubeconfig.
	RuntimeID string
	// PendingDeletionOf is the runtime whose deletion the shoot waits for; empty when it does not.
	PendingDeletionOf string
}

// CheckShoot refuses an admin kubeconfig of a shoot that does not name the GardenerCluster's runtime (another
// runtime's, one that names none) or belongs to a deleted one: a GardenerCluster naming a shoot must not hand out
// access to someone else's cluster.
func CheckShoot(clusterName string, s ShootIdentity) error {
	switch {
	case s.PendingDeletionOf != "":
		return fmt.Errorf("%w: shoot %s (runtime %s)", ErrShootPendingDeletion, s.Ref.Name, s.PendingDeletionOf)
	case s.RuntimeID == "":
		return fmt.Errorf("%w: shoot %s names no runtime (no runtime-id annotation), so it is not the cluster of runtime %s",
			ErrShootOfAnotherRuntime, s.Ref.Name, clusterName)
	case s.RuntimeID != clusterName:
		return fmt.Errorf("%w: shoot %s was created for runtime %s, not %s", ErrShootOfAnotherRuntime, s.Ref.Name, s.RuntimeID, clusterName)
	}
	return nil
}
