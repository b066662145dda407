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
	for _, s := range secrets {
		if !strings.HasPrefix(s.Name, secretsPrefix) {
			continue
		}
		r.reads++
		if err := usableKubeconfig(s.Data[kubeconfig.SecretKey]); err != nil {
			r.bad = append(r.bad, fmt.Sprintf("%s: Secret %s (resourceVersion %s): %v", stamp(at), s.Name, s.ResourceVersion, err))
		}
	}
}

func (r *secretReader) result() (int, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reads, append([]string(nil), r.bad...)
}

// healthWatch scrapes kim_gardener_health from whichever manager runs now and remembers whether it showed an error
// while faults were on.
type healthWatch struct {
	mu       sync.Mutex
	manager  *harness.Manager
	faultsOn func() bool
	errSeen  bool
	scrapes  int
}

func (h *healthWatch) set(m *harness.Manager) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.manager = m
}

// status is the current kim_gardener_health status of the running manager ("" when it cannot be scraped).
func (h *healthWatch) status(ctx context.Context) string {
	h.mu.Lock()
	m := h.manager
	h.mu.Unlock()
	if m == nil || m.Exited() {
		return ""
	}
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
