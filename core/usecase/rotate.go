package usecase

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/ports"
)

// Rotator keeps the kubeconfig Secret of a GardenerCluster filled: it issues an admin kubeconfig only when the
// rotation policy says so (confirmed live first, so one rotation never becomes two), writes it only into a Secret
// the GardenerCluster owns, and removes the Secrets it owns when it goes. A GardenerCluster is written by whoever
// may create one in the KCP: it can make the operator neither overwrite nor delete another Secret, nor hand out
// the kubeconfig of another runtime's shoot.
type Rotator struct {
	Issuer ports.KubeconfigIssuer
	Store  ports.KubeconfigSecretStore
	// Shoots reads the shoot a GardenerCluster names (from the cache, and live before every issue), to refuse a
	// shoot that does not name the GardenerCluster's runtime; nil skips that check (tests only).
	Shoots ports.ShootReader
	Policy kubeconfig.Policy
}

// RotationResult is the outcome of one pass for a GardenerCluster.
type RotationResult struct {
	// Request is what the pass decided on: the live request once it was confirmed.
	Request ports.KubeconfigRequest
	// Confirmed is true when Request was read from the API server.
	Confirmed bool
	// Gone is true when the GardenerCluster disappeared or is being deleted: nothing was done and nothing is reported.
	Gone     bool
	Decision kubeconfig.Decision
	Status   kubeconfig.Status
	// Requested is true when Gardener was asked for a kubeconfig; RequestErr is its answer's error.
	Requested  bool
	RequestErr error
	// Written is true when a new kubeconfig is in the Secret, valid until ExpiresAt (also set for a valid one).
	Written   bool
	ExpiresAt time.Time
	// ClearForce asks to remove the force-rotation annotation: the forced rotation happened.
	ClearForce bool
}

// observation is what one decision about a GardenerCluster's Secret was taken on.
type observation struct {
	decision kubeconfig.Decision
	md       ports.KubeconfigSecretMetadata
	verdict  kubeconfig.SecretVerdict
	shoot    kubeconfig.ShootRef
	// missed: the decision was taken on the cache, which held no Secret (no proof that none exists).
	missed bool
}

// Rotate runs one pass for req (read from a cache) at now; live confirms it before a Gardener call. An error
// means the pass could not observe what it decides on; refusals and Gardener's failures are part of the result.
func (r *Rotator) Rotate(ctx context.Context, req ports.KubeconfigRequest, live ports.KubeconfigRequests, now time.Time) (RotationResult, error) {
	res := RotationResult{Request: req}
	o, err := r.decide(ctx, req, ports.ReadCached, now)
	if kubeconfig.Refusal(err) && o.missed {
		// The cache does not hold every Secret (only labelled ones): the refusal of a Secret it missed is told in
		// the words of the Secret that is there.
		o, err = r.decide(ctx, req, ports.ReadLive, now)
	}
	if kubeconfig.Refusal(err) {
		res.Status = kubeconfig.Refused(err)
		return res, nil
	} else if err != nil {
		return res, err
	}
	if o.decision.Issue || !req.History.Succeeded {
		// Before spending a Gardener call: the cache may lag behind our own last write or the removal of the force
		// annotation. Without an issue the live status tells whether a success is recorded already (the reconcile
		// right after the first kubeconfig often runs before the status reached the cache); only clusters without a
		// recorded success pay for that read, once.
		confirmed, exists, err := live.Confirm(ctx, req.Namespace, req.Name)
		if err != nil {
			return res, fmt.Errorf("confirm gardener cluster %s/%s: %w", req.Namespace, req.Name, err)
		}
		if !exists || confirmed.Deleting {
			return RotationResult{Request: req, Gone: true}, nil
		}
		res.Request, res.Confirmed = confirmed, true
		if o.decision.Issue {
			if o, err = r.decide(ctx, confirmed, ports.ReadLive, now); kubeconfig.Refusal(err) {
				res.Status = kubeconfig.Refused(err)
				return res, nil
			} else if err != nil {
				return res, err
			}
		}
	}
	req, res.Decision = res.Request, o.decision
	if !o.decision.Issue {
		if missing := kubeconfig.LabelsMissing(o.md.Labels, kubeconfig.SecretLabels(req.Labels, req.Name)); missing != nil {
			if err := r.Store.EnsureLabels(ctx, req.Secret, missing); err != nil {
				return res, fmt.Errorf("sync labels of the kubeconfig secret: %w", err)
			}
		}
		res.ExpiresAt = o.decision.ExpiresAt
		res.Status = kubeconfig.Valid(o.decision, req.History, now)
		return res, nil
	}
	return r.issue(ctx, req, o, res, now)
}

// decide reads the Secret's metadata in the given mode, checks that the GardenerCluster may write it and may have
// the shoot's kubeconfig (a refusal is returned as the error, wrapping the kubeconfig package's errors), and
// applies the rotation policy. ReadCached reads the Secret from the cache alone (CachedMetadata): a miss decides
// to issue, and every issue is decided again on live reads (Rotate), so confirming the miss live as well read the
// Secret of every new GardenerCluster twice (issue 29).
func (r *Rotator) decide(ctx context.Context, req ports.KubeconfigRequest, mode ports.ReadMode, now time.Time) (observation, error) {
	md, err := r.readMetadata(ctx, req.Secret, mode)
	ex, err := existingSecret(md, err)
	if err != nil {
		return observation{}, err
	}
	o := observation{md: md, missed: ex == nil && mode == ports.ReadCached}
	if o.verdict, err = kubeconfig.CheckClusterSecret(req.Namespace, req.Name, req.Secret.Namespace, req.Secret.Name, ex); err != nil {
		return o, err
	}
	if o.shoot, err = r.shootRef(ctx, req, mode); err != nil {
		return o, err
	}
	rec := kubeconfig.Recorded{}
	if ex != nil {
		rec = kubeconfig.Recorded{SecretExists: true, HasKubeconfig: md.HasKubeconfig,
			IssuedAt: md.Annotations[kubeconfig.AnnotationLastSync], ExpiresAt: md.Annotations[kubeconfig.AnnotationExpiresAt],
			Shoot: kubeconfig.ShootRef{Name: md.Annotations[kubeconfig.AnnotationShootName], UID: md.Annotations[kubeconfig.AnnotationShootUID]}}
	}
	o.decision = r.Policy.Decide(now, req.Name, rec, req.Force, o.shoot)
	return o, nil
}

// shootRef reads the shoot the GardenerCluster names and checks that it may hand out its kubeconfig: the shoot must
// name the GardenerCluster's runtime. mode is the read of the decision: the garden cache first, then the API server
// before Gardener is asked for a kubeconfig (Rotate decides again on live reads before every issue). So a cache miss
// is never trusted: the cache may lag behind a shoot just created, for another runtime too. A shoot absent live is
// no refusal: Gardener answers NotFound when asked.
func (r *Rotator) shootRef(ctx context.Context, req ports.KubeconfigRequest, mode ports.ReadMode) (kubeconfig.ShootRef, error) {
	if r.Shoots == nil {
		return kubeconfig.ShootRef{Name: req.Shoot}, nil
	}
	s, err := r.Shoots.Get(ctx, req.Shoot, mode)
	if err != nil {
		return kubeconfig.ShootRef{}, fmt.Errorf("read shoot %s: %w", req.Shoot, err)
	}
	if !s.Exists {
		return kubeconfig.ShootRef{Name: req.Shoot}, nil
	}
	id := kubeconfig.ShootIdentity{Ref: kubeconfig.ShootRef{Name: req.Shoot, UID: s.UID}, RuntimeID: s.Marks.RuntimeID}
	if pd := s.Marks.PendingDeletion; s.Marks.Managed && pd != nil {
		id.PendingDeletionOf = pd.RuntimeID
	}
	return id.Ref, kubeconfig.CheckShoot(req.Name, id)
}

// issue asks Gardener for a kubeconfig and writes it into the Secret that was checked.
func (r *Rotator) issue(ctx context.Context, req ports.KubeconfigRequest, o observation, res RotationResult, now time.Time) (RotationResult, error) {
	issued, err := r.Issuer.IssueAdminKubeconfig(ctx, req.Shoot, r.Policy.Validity)
	res.Requested, res.RequestErr = true, err
	if err != nil {
		res.Status = kubeconfig.NotIssued(failure(err), req.History, req.Shoot, err.Error())
		return res, nil
	}
	err = r.write(ctx, req, o, ports.KubeconfigSecret{Ref: req.Secret, OwnerNamespace: req.Namespace, OwnerName: req.Name,
		OwnerLabels: req.Labels, Kubeconfig: issued.Kubeconfig, IssuedAt: now, ExpiresAt: issued.ExpiresAt, Shoot: o.shoot})
	switch {
	case kubeconfig.Refusal(err):
		res.Status = kubeconfig.Refused(err)
	case err != nil:
		res.Status = kubeconfig.WriteFailed(req.Secret.String(), err.Error())
	default:
		res.Written, res.ExpiresAt, res.ClearForce = true, issued.ExpiresAt, req.Force
		res.Status = kubeconfig.Issued(o.decision, req.Secret.String(), issued.ExpiresAt,
			r.Policy.RotateAt(req.Name, now, issued.ExpiresAt), now)
	}
	return res, nil
}

// write stores the issued kubeconfig in the Secret that was checked: a create when it did not exist, otherwise
// pinned to the version whose ownership was checked. Should the Secret change between the check and the write
// (someone else writes it), it is read and checked again, and the same kubeconfig written: Gardener is not asked
// twice.
func (r *Rotator) write(ctx context.Context, req ports.KubeconfigRequest, o observation, s ports.KubeconfigSecret) error {
	md, verdict := o.md, o.verdict
	for attempt := 0; ; attempt++ {
		s.ExpectAbsent = verdict == kubeconfig.SecretAbsent
		s.Precondition = ports.Precondition{UID: md.UID, ResourceVersion: md.ResourceVersion}
		err := r.Store.Write(ctx, s)
		if !errors.Is(err, ports.ErrConflict) || attempt == 2 {
			return err
		}
		var rerr error
		md, rerr = r.Store.ReadMetadata(ctx, s.Ref, ports.ReadLive)
		ex, rerr := existingSecret(md, rerr)
		if rerr != nil {
			return rerr
		}
		if verdict, rerr = kubeconfig.CheckClusterSecret(req.Namespace, req.Name, s.Ref.Namespace, s.Ref.Name, ex); rerr != nil {
			return rerr
		}
	}
}

// readMetadata reads the Secret's metadata: from the cache alone for ReadCached (a miss is ErrSecretNotFound,
// unconfirmed), otherwise as the store's ReadMetadata in that mode.
func (r *Rotator) readMetadata(ctx context.Context, ref ports.SecretRef, mode ports.ReadMode) (ports.KubeconfigSecretMetadata, error) {
	if mode != ports.ReadCached {
		return r.Store.ReadMetadata(ctx, ref, mode)
	}
	md, found, err := r.Store.CachedMetadata(ctx, ref)
	switch {
	case err != nil:
		return md, fmt.Errorf("read secret %s from the cache: %w", ref, err)
	case !found:
		return md, fmt.Errorf("read secret %s from the cache: %w", ref, ports.ErrSecretNotFound)
	}
	return md, nil
}

// existingSecret turns the store's metadata into what kubeconfig.CheckClusterSecret looks at; nil when there is no Secret.
func existingSecret(md ports.KubeconfigSecretMetadata, err error) (*kubeconfig.ExistingSecret, error) {
	switch {
	case errors.Is(err, ports.ErrSecretNotFound):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return &kubeconfig.ExistingSecret{Name: md.Name, Labels: md.Labels, Annotations: md.Annotations}, nil
}

// failure classifies the issuer's error for the status.
func failure(err error) kubeconfig.Failure {
	switch {
	case errors.Is(err, ports.ErrShootNotReady):
		return kubeconfig.FailureShootNotReady
	case errors.Is(err, ports.ErrShootNotFound):
		return kubeconfig.FailureShootNotFound
	case errors.Is(err, ports.ErrForbidden):
		return kubeconfig.FailureForbidden
	}
	return kubeconfig.FailureTransient
}
