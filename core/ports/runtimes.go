package ports

import "context"

// RestoreRequest asks to bring back the Runtime recorded on a shoot pending deletion.
type RestoreRequest struct {
	// Document is the Runtime as recorded at deletion (opaque to the domain: the CR as JSON).
	Document []byte
	// RuntimeID, Namespace and ShootName come from the deletion record and the shoot: the document must describe
	// exactly this Runtime (name, namespace, spec.shoot.name), or it is refused with ErrInvalidRestoreDocument.
	RuntimeID, Namespace, ShootName string
}

// RuntimeRegistry answers for the Runtimes in the KCP: the only authority on whether a runtime still exists.
type RuntimeRegistry interface {
	// Claims reports whether a Runtime named runtimeID that names shootName exists in any watched namespace (also
	// one being deleted). A Runtime of that ID naming another shoot (created anew: the shoot name is immutable)
	// does not claim the cluster. It asks the API server, not a cache: the answer decides whether a cluster may be
	// deleted. Errors wrap ErrTransient.
	Claims(ctx context.Context, runtimeID, shootName string) (bool, error)
	// Recreate creates the Runtime of r.Document with the restore annotation, after checking that the document
	// describes r.RuntimeID in r.Namespace with spec.shoot.name r.ShootName (ErrInvalidRestoreDocument otherwise).
	// An existing Runtime of that name is left as it is. With dryRun nothing is written (the API server validates
	// the object). Errors also: ErrTransient, and the API server's rejection (ErrShootRejected is not used here).
	Recreate(ctx context.Context, r RestoreRequest, dryRun bool) error
}
