package app

import (
	"errors"
	"fmt"
	"net"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
)

// gardenStartBackoff bounds how long building the garden cluster client retries a Gardener that answers 429, 5xx
// or not at all: building it already asks Gardener's discovery (the cache needs to know which types are
// namespaced), and one failed discovery request must not make the process exit (a crash loop backs off for
// minutes, and a flaky Gardener then keeps the operator down far longer than the flake lasted).
var gardenStartBackoff = []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second,
	4 * time.Second, 8 * time.Second, 15 * time.Second, 30 * time.Second}

// newGardenCluster is cluster.New, retried (gardenStartBackoff) while Gardener's answers are transient.
func newGardenCluster(cfg *rest.Config, opts ...cluster.Option) (cluster.Cluster, error) {
	return retryTransient(gardenStartBackoff, func() (cluster.Cluster, error) { return cluster.New(cfg, opts...) })
}

// retryTransient calls build until it succeeds, fails with an error that is not transient, or the backoff is used
// up (the last error is returned).
func retryTransient[T any](backoff []time.Duration, build func() (T, error)) (T, error) {
	for attempt := 0; ; attempt++ {
		v, err := build()
		if err == nil || !transient(err) || attempt == len(backoff) {
			if err != nil && attempt > 0 {
				err = fmt.Errorf("after %d attempts: %w", attempt+1, err)
			}
			return v, err
		}
		ctrl.Log.WithName("setup").Error(err, "Gardener not available, retrying", "in", backoff[attempt].String())
		time.Sleep(backoff[attempt])
	}
}

// transient reports whether err is an answer worth waiting out: throttling, a server error, a timeout or a
// connection that failed.
func transient(err error) bool {
	var netErr net.Error
	return apierrors.IsTooManyRequests(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsInternalError(err) ||
		apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) ||
		errors.As(err, &netErr)
}
