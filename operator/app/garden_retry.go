package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
)

// gardenStartBackoff bounds how long building the garden cluster client retries a Gardener that answers 429, 5xx
// or not at all: building it already asks Gardener's discovery (the cache needs to know which types are
// namespaced), and one failed discovery request must not make the process exit (a crash loop backs off for
// minutes, and a flaky Gardener then keeps the operator down far longer than the flake lasted). Nine attempts, about
// a minute in all.
var gardenStartBackoff = wait.Backoff{Duration: 250 * time.Millisecond, Factor: 2, Steps: 9, Cap: 30 * time.Second}

// newGardenCluster is cluster.New, retried (gardenStartBackoff) while Gardener's answers are transient and ctx
// lasts.
func newGardenCluster(ctx context.Context, cfg *rest.Config, opts ...cluster.Option) (cluster.Cluster, error) {
	return retryTransient(ctx, gardenStartBackoff, func() (cluster.Cluster, error) { return cluster.New(cfg, opts...) })
}

// retryTransient calls build until it succeeds, fails with an error that is not transient, the backoff is used up
// (the last error is returned) or ctx ends: a SIGTERM while Gardener is unreachable stops the start at once instead
// of after the whole backoff, which is longer than a pod's grace period.
func retryTransient[T any](ctx context.Context, backoff wait.Backoff, build func() (T, error)) (T, error) {
	var v T
	var last error
	attempts := 0
	err := wait.ExponentialBackoffWithContext(ctx, backoff, func(context.Context) (bool, error) {
		attempts++
		v, last = build()
		switch {
		case last == nil:
			return true, nil
		case !transient(last):
			return false, last
		}
		ctrl.Log.WithName("setup").Error(last, "Gardener not available, retrying", "attempt", attempts)
		return false, nil
	})
	switch {
	case err == nil:
		return v, nil
	case last == nil || errors.Is(err, last):
		// not transient, or stopped before the first attempt
	case ctx.Err() != nil:
		return v, fmt.Errorf("stopped after %d attempts (%w); the last: %w", attempts, ctx.Err(), last)
	default:
		err = last // the backoff is used up
	}
	if attempts > 1 {
		err = fmt.Errorf("after %d attempts: %w", attempts, err)
	}
	return v, err
}

// transient reports whether err is an answer worth waiting out: throttling, a server error, a timeout or a
// connection that failed.
func transient(err error) bool {
	var netErr net.Error
	return apierrors.IsTooManyRequests(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsInternalError(err) ||
		apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) ||
		errors.As(err, &netErr)
}
