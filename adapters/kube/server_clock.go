package kube

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kyma-project/kim/core/ports"
)

// ServerClock implements ports.ServerClock with the Date header of an API server's /version endpoint. An answer
// is reused for MaxAge, extrapolated with the monotonic clock (immune to jumps of the wall clock, which is what it
// guards against).
type ServerClock struct {
	client *http.Client
	url    string
	// MaxAge is how long an answer is reused (default 30 s).
	MaxAge time.Duration

	mu     sync.Mutex
	server time.Time // the server's time at local (monotonic) time at
	at     time.Time
}

var _ ports.ServerClock = (*ServerClock)(nil)

// NewServerClock returns a clock reading the API server of cfg.
func NewServerClock(cfg *rest.Config) (*ServerClock, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("server clock: %w", err)
	}
	return &ServerClock{client: hc, url: strings.TrimSuffix(cfg.Host, "/") + "/version", MaxAge: 30 * time.Second}, nil
}

// ServerNow implements ports.ServerClock.
func (c *ServerClock) ServerNow(ctx context.Context) (time.Time, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at.IsZero() && time.Since(c.at) < c.MaxAge {
		return c.server.Add(time.Since(c.at)), nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		return time.Time{}, fmt.Errorf("read the API server's time: %w", err)
	}
	sent := time.Now()
	resp, err := c.client.Do(req)
	if err != nil {
		return time.Time{}, fmt.Errorf("read the API server's time: %w: %w", ports.ErrTransient, err)
	}
	_ = resp.Body.Close()
	date, err := http.ParseTime(resp.Header.Get("Date"))
	if err != nil {
		return time.Time{}, fmt.Errorf("read the API server's time: no Date header (%q): %w", resp.Header.Get("Date"), ports.ErrTransient)
	}
	// The Date header has second resolution and was written somewhere during the round trip: take the middle.
	c.at = sent.Add(time.Since(sent) / 2)
	c.server = date.Add(500 * time.Millisecond)
	return c.server.Add(time.Since(c.at)), nil
}
