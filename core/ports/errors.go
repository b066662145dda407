package ports

import (
	"errors"
	"fmt"
)

// Error classes of the ports. Implementations wrap one of them (errors.Is works) together with the underlying
// error's text, so callers can both branch on the class and show what the other system said.
var (
	// ErrShootNotFound: the shoot does not exist in the project. Retrying only helps once someone creates it.
	ErrShootNotFound = errors.New("shoot not found")
	// ErrShootNotReady: the shoot exists but cannot have a kubeconfig yet (no advertised address or CA yet, while it
	// is being created). Retrying later helps.
	ErrShootNotReady = errors.New("shoot not ready")
	// ErrForbidden: the operator's credentials may not do this. Retrying only helps after the permissions are fixed.
	ErrForbidden = errors.New("forbidden")
	// ErrTransient: the request failed on the way (timeouts, throttling, server errors). Retrying helps.
	ErrTransient = errors.New("transient error")
	// ErrConflict: the object changed since it was observed (a precondition on UID or resourceVersion failed).
	// Nothing was written; observe again and decide again.
	ErrConflict = errors.New("object changed since it was observed")
	// ErrShootRejected: the garden refused the shoot as invalid or forbidden (admission, validation, quota
	// objects). Repeating the same request cannot succeed; the spec or the configuration must change.
	ErrShootRejected = errors.New("shoot rejected by the garden")
	// ErrShootNotManaged: the shoot exists but does not carry the operator's marks (or belongs to another runtime);
	// the operator never changes it.
	ErrShootNotManaged = errors.New("shoot not managed by this operator")
	// ErrAdoptionReviewRequired: the shoot was adopted from another system and never written by this operator, and
	// the apply would change it (ShootApply.HoldAdoptedChanges): nothing was written; a person reviews the
	// differences (kim migrate) and approves them, or the landscape turns the adopt-only mode off.
	ErrAdoptionReviewRequired = errors.New("changes to an adopted shoot await review")
	// ErrSecretNotFound: the kubeconfig Secret does not exist.
	ErrSecretNotFound = errors.New("kubeconfig secret not found")
	// ErrRuntimeUnreachable: the runtime's API server cannot be reached with its kubeconfig (Secret missing, server
	// not answering, credentials not yet valid). Retrying later helps.
	ErrRuntimeUnreachable = errors.New("runtime API server unreachable")
	// ErrInvalidRestoreDocument: a recorded Runtime cannot be restored as it is (it names another runtime, namespace
	// or shoot than the deletion record, or does not decode).
	ErrInvalidRestoreDocument = errors.New("invalid restore document")
)

// MissingReferenceError: the garden refused the shoot because the object one of its spec.resources entries names
// does not exist in the project namespace (Gardener's reference admission). Resource is the entry's name. It is a
// rejection (errors.Is ErrShootRejected), but one the landscape settles by creating the object, not by changing the
// Runtime: repeating the same request succeeds once the object exists.
type MissingReferenceError struct{ Resource string }

func (e *MissingReferenceError) Error() string {
	return fmt.Sprintf("the object spec.resources entry %q names does not exist", e.Resource)
}

// Is makes the error an ErrShootRejected for the callers that only tell rejections apart.
func (e *MissingReferenceError) Is(target error) bool { return target == ErrShootRejected }

// ReadMode says how fresh a read must be.
type ReadMode int

const (
	// ReadCached may answer from a cache that lags behind recent writes by a moment; it costs no API call.
	ReadCached ReadMode = iota
	// ReadLive asks the API server; use it to confirm a decision that costs a Gardener call or cannot be undone.
	ReadLive
)

// Precondition pins a write to the object that was observed: an empty field is not checked. A write whose
// precondition fails returns an error wrapping ErrConflict and changes nothing.
type Precondition struct {
	UID             string
	ResourceVersion string
}
