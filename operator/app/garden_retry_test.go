package app

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The error the manager exited with when Gardener's discovery answered 503 once while it started (found by the
// chaos harness): controller-runtime wraps the discovery error.
func discoveryFailed(code int) error {
	return fmt.Errorf("create garden cluster client: failed to determine if *v1.ConfigMap is namespaced: failed to get restmapping: %w",
		fmt.Errorf("failed to get server groups: %w", apierrors.NewGenericServerResponse(code, "get", schema.GroupResource{}, "", "", 0, true)))
}

func TestGardenClusterRetriesTransientAnswers(t *testing.T) {
	zero := make([]time.Duration, 5)
	calls := 0
	v, err := retryTransient(zero, func() (int, error) {
		calls++
		switch calls {
		case 1:
			return 0, discoveryFailed(http.StatusServiceUnavailable)
		case 2:
			return 0, discoveryFailed(http.StatusTooManyRequests)
		case 3:
			return 0, discoveryFailed(http.StatusInternalServerError)
		case 4:
			return 0, discoveryFailed(http.StatusGatewayTimeout)
		}
		return 42, nil
	})
	if err != nil || v != 42 || calls != 5 {
		t.Fatalf("got %d, %v after %d calls; want 42 after 5", v, err, calls)
	}
}

func TestGardenClusterGivesUpOnPermanentErrorsAndAfterTheBackoff(t *testing.T) {
	calls := 0
	_, err := retryTransient(make([]time.Duration, 3), func() (int, error) {
		calls++
		return 0, discoveryFailed(http.StatusForbidden)
	})
	if err == nil || calls != 1 {
		t.Errorf("403: %v after %d calls, want the error at once", err, calls)
	}
	calls = 0
	_, err = retryTransient(make([]time.Duration, 3), func() (int, error) {
		calls++
		return 0, discoveryFailed(http.StatusServiceUnavailable)
	})
	if err == nil || calls != 4 || !apierrors.IsServiceUnavailable(err) {
		t.Errorf("503 forever: %v after %d calls, want the 503 after 4", err, calls)
	}
	if transient(errors.New("invalid kubeconfig")) {
		t.Error("a plain error counted as transient")
	}
}
