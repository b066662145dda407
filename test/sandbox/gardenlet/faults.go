package gardenlet

import (
	"fmt"
	"slices"
	"strings"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
)

// Annotations on a Shoot that steer the simulated gardenlet for that shoot only.
const (
	annotationPrefix = "sandbox.kim.kyma-project.io/"
	// AnnotationFailWith makes the next matching operation end with these Gardener error codes
	// (comma-separated, e.g. "ERR_INFRA_QUOTA_EXCEEDED"). Non-retryable codes end in state Failed, others in Error.
	AnnotationFailWith = annotationPrefix + "fail-with"
	// AnnotationFailOperation restricts AnnotationFailWith to one operation type (Create, Reconcile, Delete).
	AnnotationFailOperation = annotationPrefix + "fail-operation"
	// AnnotationFailMessage is the lastErrors description used with AnnotationFailWith.
	AnnotationFailMessage = annotationPrefix + "fail-message"
	// AnnotationDuration overrides how long every operation of this shoot takes (Go duration, e.g. "30s").
	AnnotationDuration = annotationPrefix + "duration"
	// AnnotationStuckDeletion ("true") keeps the deletion of this shoot in Processing forever.
	AnnotationStuckDeletion = annotationPrefix + "stuck-deletion"
	// AnnotationNoRuntimeAPIServer ("true") gives this shoot a placeholder address instead of a runtime API
	// server even when the environment starts them (saves seconds and memory in tests that do not need one).
	// Set it at creation: the endpoint is chosen once.
	AnnotationNoRuntimeAPIServer = annotationPrefix + "no-runtime-api-server"
)

// fault is the failure to simulate for one operation (zero value: none).
type fault struct {
	codes   []gardencorev1beta1.ErrorCode
	message string
}

func (f fault) none() bool { return len(f.codes) == 0 }

// faultRule is a fault FailMatching configured: operation op of the shoots match selects fails with codes.
type faultRule struct {
	match func(*gardencorev1beta1.Shoot) bool
	op    gardencorev1beta1.LastOperationType
	codes []gardencorev1beta1.ErrorCode
}

// FailMatching makes operation op (empty: every operation) of every shoot that match selects fail with codes, from
// the gardenlet's next look at the shoot until remove is called. A test that must fail a shoot it does not create
// itself (one a command under test creates) sets the rule before, instead of racing the operation's duration to
// annotate the shoot. match is called from the gardenlet's workers, concurrently.
func (g *Gardenlet) FailMatching(match func(*gardencorev1beta1.Shoot) bool, op gardencorev1beta1.LastOperationType,
	codes ...gardencorev1beta1.ErrorCode) (remove func()) {
	r := &faultRule{match: match, op: op, codes: codes}
	g.mu.Lock()
	g.rules = append(g.rules, r)
	g.mu.Unlock()
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.rules = slices.DeleteFunc(g.rules, func(x *faultRule) bool { return x == r })
	}
}

// faultFor returns the fault configured (annotation first, then FailMatching's rules, then global options) for
// operation op.
func (g *Gardenlet) faultFor(shoot *gardencorev1beta1.Shoot, op gardencorev1beta1.LastOperationType) fault {
	ann := shoot.Annotations
	if op == gardencorev1beta1.LastOperationTypeDelete && strings.EqualFold(ann[v1beta1constants.AnnotationConfirmationForceDeletion], "true") {
		return fault{} // like Gardener, a force-deletion skips the cleanup that failed
	}
	if codes := strings.TrimSpace(ann[AnnotationFailWith]); codes != "" {
		if only := ann[AnnotationFailOperation]; only != "" && !strings.EqualFold(only, string(op)) {
			return fault{}
		}
		return fault{codes: parseCodes(codes), message: ann[AnnotationFailMessage]}
	}
	g.mu.Lock()
	rules := slices.Clone(g.rules)
	g.mu.Unlock()
	for _, r := range rules {
		if (r.op == "" || r.op == op) && r.match(shoot) {
			return fault{codes: r.codes}
		}
	}
	if g.opts.FailWith != "" && (g.opts.FailOperation == "" || g.opts.FailOperation == op) {
		return fault{codes: parseCodes(g.opts.FailWith)}
	}
	return fault{}
}

func parseCodes(s string) []gardencorev1beta1.ErrorCode {
	var out []gardencorev1beta1.ErrorCode
	for c := range strings.SplitSeq(s, ",") {
		if c = strings.TrimSpace(c); c != "" {
			out = append(out, gardencorev1beta1.ErrorCode(c))
		}
	}
	return out
}

func (f fault) description(op gardencorev1beta1.LastOperationType) string {
	if f.message != "" {
		return f.message
	}
	codes := make([]string, len(f.codes))
	for i, c := range f.codes {
		codes[i] = string(c)
	}
	return fmt.Sprintf("simulated %s failure: %s", strings.ToLower(string(op)), strings.Join(codes, ", "))
}

// stuckDeletion reports whether the deletion of shoot must never finish.
func (g *Gardenlet) stuckDeletion(shoot *gardencorev1beta1.Shoot) bool {
	return g.opts.StuckDeletion || strings.EqualFold(shoot.Annotations[AnnotationStuckDeletion], "true")
}

// duration returns how long operation op takes for shoot.
func (g *Gardenlet) duration(shoot *gardencorev1beta1.Shoot, op gardencorev1beta1.LastOperationType) time.Duration {
	if d, err := time.ParseDuration(shoot.Annotations[AnnotationDuration]); err == nil && d >= 0 {
		return d
	}
	switch op {
	case gardencorev1beta1.LastOperationTypeCreate:
		return g.opts.CreateDuration
	case gardencorev1beta1.LastOperationTypeDelete:
		return g.opts.DeleteDuration
	default:
		return g.opts.ReconcileDuration
	}
}
