package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

// Prepare is the start of a harness run: a context that Ctrl-C (or SIGTERM) cancels, so the deferred clean-up
// leaves no API server or manager behind; *workDir created when empty (a new temporary directory named after
// prefix, kept; a named one is created if missing); *managerBin built from operator/cmd/manager into it when empty. Call stop when done.
func Prepare(prefix string, workDir, managerBin *string) (ctx context.Context, stop context.CancelFunc, err error) {
	if *workDir == "" {
		*workDir, err = os.MkdirTemp("", prefix)
	} else {
		err = os.MkdirAll(*workDir, 0o700)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("create work dir: %w", err)
	}
	if *managerBin == "" {
		*managerBin = filepath.Join(*workDir, "manager")
		Logf("building the manager into %s", *managerBin)
		if out, err := exec.Command("go", "build", "-o", *managerBin, "./operator/cmd/manager").CombinedOutput(); err != nil {
			return nil, nil, fmt.Errorf("build manager: %w: %s", err, out)
		}
	}
	ctx, stop = signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	return ctx, stop, nil
}

// Activity is one look at a manager for WaitIdle: Work changes while it works (reconciles, requests), Busy is true
// while something is queued or running, Enough once it has done the least work the phase needs.
type Activity struct {
	Work        float64
	Busy        bool
	Enough      bool
	Description string
}

// WaitIdle polls read every 250 ms until the manager has done enough, is not busy and its work has not changed
// for quiet. It returns the last reading and when the last change was seen.
func WaitIdle[C any](ctx context.Context, read func(context.Context) (C, error), look func(C) Activity, quiet, timeout time.Duration) (C, time.Time, error) {
	deadline := time.Now().Add(timeout)
	var last C
	lastWork := -1.0
	lastChange := time.Now()
	// What keeps the manager busy, every 10 s: a restart that takes long says where it is.
	nextLog := time.Now().Add(10 * time.Second)
	for {
		c, err := read(ctx)
		if err != nil {
			return last, lastChange, err
		}
		now := time.Now()
		a := look(c)
		if a.Work != lastWork || a.Busy {
			lastChange = now
		}
		last, lastWork = c, a.Work
		if now.After(nextLog) {
			Logf("not idle yet: %s", a.Description)
			nextLog = now.Add(10 * time.Second)
		}
		if a.Enough && !a.Busy && now.Sub(lastChange) >= quiet {
			return c, lastChange, nil
		}
		if now.After(deadline) {
			return c, lastChange, fmt.Errorf("manager not idle after %s (%s)", timeout, a.Description)
		}
		select {
		case <-ctx.Done():
			return c, lastChange, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}
