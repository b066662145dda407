package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/test/bench/harness"
	"github.com/kyma-project/kim/test/testenv/keb"
)

// secretReader is a consumer of kubeconfigs: it reads every kubeconfig Secret of the KCP again and again and
// records each read of an existing Secret without a usable kubeconfig.
type secretReader struct {
	c client.Reader

	mu    sync.Mutex
	reads int
	bad   []string
	// passes are when each list was read and how many kubeconfig Secrets it had.
	passes []readPass
}

type readPass struct {
	At    time.Time
	Reads int
}

func (r *secretReader) run(ctx context.Context, interval time.Duration) {
	for ctx.Err() == nil {
		var list corev1.SecretList
		if err := r.c.List(ctx, &list, client.InNamespace(keb.Namespace)); err == nil {
			r.inspect(list.Items, time.Now())
		}
		select {
		case <-ctx.Done():
		case <-time.After(interval):
		}
	}
}

func (r *secretReader) inspect(secrets []corev1.Secret, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	pass := readPass{At: at}
	defer func() { r.passes = append(r.passes, pass) }()
	for _, s := range secrets {
		if !strings.HasPrefix(s.Name, secretsPrefix) {
			continue
		}
		r.reads++
		pass.Reads++
		if err := usableKubeconfig(s.Data[kubeconfig.SecretKey]); err != nil {
			r.bad = append(r.bad, fmt.Sprintf("%s: Secret %s (resourceVersion %s): %v", stamp(at), s.Name, s.ResourceVersion, err))
		}
	}
}

// readsBetween counts the kubeconfig Secret reads from a to b.
func (r *secretReader) readsBetween(a, b time.Time) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, p := range r.passes {
		if !p.At.Before(a) && !p.At.After(b) {
			n += p.Reads
		}
	}
	return n
}

func (r *secretReader) result() (int, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reads, append([]string(nil), r.bad...)
}

// healthWatch scrapes kim_gardener_health from the managers that run now (every replica reports it, standbys too)
// and remembers whether one showed an error while faults were on.
type healthWatch struct {
	mu       sync.Mutex
	managers func() []*harness.Manager
	faultsOn func() bool
	errSeen  bool
	scrapes  int
}

// status is the current kim_gardener_health status of the running managers: "error" when one says so, "healthy"
// when all do, "" when none runs or one cannot be scraped.
func (h *healthWatch) status(ctx context.Context) string {
	ms := h.managers()
	if len(ms) == 0 {
		return ""
	}
	out := "healthy"
	for _, m := range ms {
		switch st := managerHealth(ctx, m); st {
		case "healthy":
		case "error":
			return st
		default:
			out = ""
		}
	}
	return out
}

func managerHealth(ctx context.Context, m *harness.Manager) string {
	s, err := m.Scrape(ctx)
	if err != nil {
		return ""
	}
	for status, v := range s.ByLabel("kim_gardener_health", "status") {
		if v == 1 {
			return status
		}
	}
	return ""
}

func (h *healthWatch) run(ctx context.Context, interval time.Duration) {
	for ctx.Err() == nil {
		on := h.faultsOn()
		st := h.status(ctx)
		h.mu.Lock()
		if st != "" {
			h.scrapes++
		}
		if on && st == "error" {
			h.errSeen = true
		}
		h.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-time.After(interval):
		}
	}
}

func (h *healthWatch) sawError() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.errSeen
}
