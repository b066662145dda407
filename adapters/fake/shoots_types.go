package fake

import (
	"slices"
	"time"

	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/domain/shootstate"
)

type gardenShoot struct {
	obs         shootstate.Shoot
	spec        shoot.Spec
	restoreSpec []byte
	confirmed   bool
	retryOp     bool
	// infrastructureConfig is what Gardener would hold as the provider infrastructure config (SetInfrastructureConfig).
	infrastructureConfig []byte
}

// DeletionLog is one deletion the garden accepted: what the shoot looked like when it was deleted.
type DeletionLog struct {
	At    time.Time
	Shoot shootstate.Shoot
	Force bool
}

// MarkLog is one deletion record the garden stored, with the garden's time of writing it.
type MarkLog struct {
	At     time.Time
	Shoot  string
	UID    string
	Record shootstate.PendingDeletion
}

// WriteLog is one write through the ports (the operator's writes; Gardener's own changes are not logged).
type WriteLog struct {
	Method, Shoot, UID string
}

func copyShoot(s shootstate.Shoot) shootstate.Shoot {
	out := s
	if s.LastOperation != nil {
		op := *s.LastOperation
		out.LastOperation = &op
	}
	out.LastErrors = slices.Clone(s.LastErrors)
	if s.DeletionTimestamp != nil {
		ts := *s.DeletionTimestamp
		out.DeletionTimestamp = &ts
	}
	if s.Marks.PendingDeletion != nil {
		pd := *s.Marks.PendingDeletion
		out.Marks.PendingDeletion = &pd
	}
	out.Live = false
	return out
}
