package contract

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/kim/core/ports"
)

// A write that keeps meeting the garden's own writes is retried for as long as the patience lasts, not a fixed
// number of times: on a loaded machine an adoption conflicted with the gardenlet more than ten times in a row.
func TestRetryConflictsRetriesUntilTheDeadline(t *testing.T) {
	conflicts := 0
	v, err := retryConflicts(5*time.Second, time.Millisecond, func() (int, error) {
		if conflicts < 25 {
			conflicts++
			return 0, fmt.Errorf("adopt: %w", ports.ErrConflict)
		}
		return 7, nil
	})
	if err != nil || v != 7 || conflicts != 25 {
		t.Errorf("after 25 conflicts: %d, %v (%d conflicts seen); want 7 and no error", v, err, conflicts)
	}

	calls := 0
	_, err = retryConflicts(50*time.Millisecond, 5*time.Millisecond, func() (int, error) {
		calls++
		return 0, ports.ErrConflict
	})
	if !errors.Is(err, ports.ErrConflict) || !strings.Contains(err.Error(), fmt.Sprintf("after %d attempts", calls)) {
		t.Errorf("always conflicting: %v after %d calls; want ErrConflict naming the attempts", err, calls)
	}

	other := errors.New("forbidden")
	calls = 0
	if _, err := retryConflicts(time.Second, time.Millisecond, func() (int, error) { calls++; return 0, other }); !errors.Is(err, other) || calls != 1 {
		t.Errorf("another error: %v after %d calls; want it at once", err, calls)
	}
}
