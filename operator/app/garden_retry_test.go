package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
)

// The error the manager exited with when Gardener's discovery answered 503 once while it started (found by the
// chaos harness): controller-runtime wraps the discovery error.
func discoveryFailed(code int) error {
	return fmt.Errorf("create garden cluster client: failed to determine if *v1.ConfigMap is namespaced: failed to get restmapping: %w",
		fmt.Errorf("failed to get server groups: %w", apierrors.NewGenericServerResponse(code, "get", schema.GroupResource{}, "", "", 0, true)))
}

func TestGardenClusterRetriesTransientAnswers(t *testing.T) {
	calls := 0
	v, err := retryTransient(t.Context(), wait.Backoff{Steps: 6}, func() (int, error) {
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
	_, err := retryTransient(t.Context(), wait.Backoff{Steps: 4}, func() (int, error) {
		calls++
		return 0, discoveryFailed(http.StatusForbidden)
	})
	if err == nil || calls != 1 {
		t.Errorf("403: %v after %d calls, want the error at once", err, calls)
	}
	calls = 0
	_, err = retryTransient(t.Context(), wait.Backoff{Steps: 4}, func() (int, error) {
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

// TestGardenClusterRetryStopsWithTheContext: a SIGTERM (the manager's context ends) while Gardener does not answer
// ends the start after the attempt under way, not after the backoff: the first wait here is an hour.
func TestGardenClusterRetryStopsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	calls := 0
	done := make(chan error, 1)
	go func() {
		_, err := retryTransient(ctx, wait.Backoff{Duration: time.Hour, Factor: 2, Steps: 9}, func() (int, error) {
			calls++
			cancel() // the signal arrives while the first attempt is under way
			return 0, discoveryFailed(http.StatusServiceUnavailable)
		})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || !apierrors.IsServiceUnavailable(err) || calls != 1 {
			t.Errorf("got %v after %d calls; want the cancellation and the last 503 after 1", err, calls)
		}
	case <-time.After(time.Minute): // a hang guard, not a timing assertion: without the context it waits an hour
		t.Fatal("the retry did not stop when its context ended")
	}
}
