// Package health watches the operator's dependencies. GardenerChecker probes the Gardener API periodically and
// exposes the result as the gauge kim_gardener_health{url,status}, so alerts and dashboards can tell a Gardener
// outage from an operator problem.
package health

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Status is the outcome of the last health check.
type Status string

// The values of the status label; exactly one of them has the value 1 at any time.
const (
	StatusUnknown Status = "unknown" // no check has finished yet
	StatusHealthy Status = "healthy"
	StatusError   Status = "error"
)

var allStatuses = []Status{StatusHealthy, StatusError, StatusUnknown}

// Defaults of GardenerChecker.
const (
	DefaultInterval = 30 * time.Second
	DefaultTimeout  = 10 * time.Second
	healthPath      = "/healthz"
)

// GardenerChecker is a manager.Runnable that checks GET <gardener>/healthz every Interval.
type GardenerChecker struct {
	// URL is the Gardener API server (label value; never contains credentials).
	URL      string
	Interval time.Duration
	Timeout  time.Duration

	client *http.Client
	gauge  *prometheus.GaugeVec

	mu     sync.Mutex
	status Status
}

// NewGardenerChecker builds a checker that uses the Gardener client config (same TLS, credentials and client guard
// as the operator's Gardener client) and registers its gauge with reg. Status starts as unknown.
func NewGardenerChecker(garden *rest.Config, reg prometheus.Registerer) (*GardenerChecker, error) {
	client, err := rest.HTTPClientFor(garden)
	if err != nil {
		return nil, fmt.Errorf("gardener health client: %w", err)
	}
	base, _, err := rest.DefaultServerUrlFor(garden)
	if err != nil {
		return nil, fmt.Errorf("gardener health url: %w", err)
	}
	c := &GardenerChecker{
		URL:      strings.TrimRight(base.String(), "/"),
		Interval: DefaultInterval,
		Timeout:  DefaultTimeout,
		client:   client,
		gauge: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "kim",
			Name:      "gardener_health",
			Help:      "Result of the last Gardener API health check: the series with the current status is 1, the others 0.",
		}, []string{"url", "status"}),
	}
	if err := reg.Register(c.gauge); err != nil {
		// A second manager in the same process (tests, the sandbox) shares the gauge; each checker owns the
		// series of its URL.
		var already prometheus.AlreadyRegisteredError
		existing, ok := (*prometheus.GaugeVec)(nil), false
		if errors.As(err, &already) {
			existing, ok = already.ExistingCollector.(*prometheus.GaugeVec)
		}
		if !ok {
			return nil, fmt.Errorf("register kim_gardener_health: %w", err)
		}
		c.gauge = existing
	}
	c.set(StatusUnknown)
	return c, nil
}

// Add creates a GardenerChecker for the Gardener config, registers its gauge in controller-runtime's metrics
// registry (served on the manager's metrics endpoint) and adds it to the manager.
func Add(mgr manager.Manager, garden *rest.Config, interval time.Duration) (*GardenerChecker, error) {
	c, err := NewGardenerChecker(garden, ctrlmetrics.Registry)
	if err != nil {
		return nil, err
	}
	if interval > 0 {
		c.Interval = interval
	}
	if err := mgr.Add(c); err != nil {
		return nil, fmt.Errorf("add gardener health checker: %w", err)
	}
	return c, nil
}

// NeedLeaderElection is false: standby replicas report Gardener's health too, so the series never disappears.
func (c *GardenerChecker) NeedLeaderElection() bool { return false }

// Start checks at once and then every Interval until ctx is done. It never fails: a broken Gardener is a status.
func (c *GardenerChecker) Start(ctx context.Context) error {
	ticker := time.NewTicker(c.Interval)
	defer ticker.Stop()
	for {
		c.CheckOnce(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// CheckOnce probes the health endpoint once, updates the gauge and returns the new status.
func (c *GardenerChecker) CheckOnce(ctx context.Context) Status {
	if ctx.Err() != nil {
		return c.Status() // shutting down: keep the last known state instead of reporting an error
	}
	err := c.probe(ctx)
	status := StatusHealthy
	if err != nil {
		status = StatusError
	}
	if prev := c.set(status); prev != status {
		log := ctrl.LoggerFrom(ctx).WithValues("url", c.URL, "status", status)
		if err != nil {
			log.Error(err, "Gardener API health check failed")
		} else {
			log.Info("Gardener API is healthy")
		}
	}
	return status
}

func (c *GardenerChecker) probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL+healthPath, nil)
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", healthPath, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", healthPath, resp.Status, strings.TrimSpace(string(body)))
	}
	if strings.TrimSpace(string(body)) != "ok" {
		return errors.New("GET " + healthPath + ": unexpected body " + fmt.Sprintf("%q", body))
	}
	return nil
}

// Status is the result of the last check.
func (c *GardenerChecker) Status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

// set switches the gauge to s (one series 1, the others 0) and returns the previous status.
func (c *GardenerChecker) set(s Status) Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	prev := c.status
	c.status = s
	for _, st := range allStatuses {
		v := 0.0
		if st == s {
			v = 1
		}
		c.gauge.WithLabelValues(c.URL, string(st)).Set(v)
	}
	return prev
}
