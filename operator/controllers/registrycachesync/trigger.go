package registrycachesync

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kyma-project/kim/core/ports"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

var runtimeIDPattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// Trigger is the HTTP endpoint that syncs one runtime at once: POST <TriggerPath>?runtimeID=<id> answers 202 when
// the sync is queued, 404 for an unknown runtime, 400 for a malformed ID, 405 for other methods. It is served by the
// metrics server, behind the same authentication and authorization (RBAC: post on the non-resource URL
// /registry-cache/sync). The Runtime Watcher or an SRE calls it after a RegistryCacheConfig changed.
type Trigger struct {
	Runtimes   client.Reader
	Namespaces []string
	Events     chan<- event.TypedGenericEvent[reconcile.Request]
}

// ServeHTTP implements http.Handler.
func (t *Trigger) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "use POST", http.StatusMethodNotAllowed)
		return
	}
	id := r.URL.Query().Get("runtimeID")
	if !runtimeIDPattern.MatchString(id) {
		http.Error(w, "runtimeID must be a runtime ID", http.StatusBadRequest)
		return
	}
	for _, ns := range t.Namespaces {
		err := t.Runtimes.Get(r.Context(), client.ObjectKey{Namespace: ns, Name: id}, &imv1.Runtime{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			http.Error(w, "cannot read the runtime", http.StatusServiceUnavailable)
			return
		}
		select {
		case t.Events <- event.TypedGenericEvent[reconcile.Request]{Object: requestFor(ns, id)}:
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.WriteHeader(http.StatusAccepted)
			_, _ = fmt.Fprintf(w, "sync of runtime %s queued\n", id) //nolint:gosec // G705: id matched runtimeIDPattern, plain text
		case <-r.Context().Done():
			http.Error(w, "timed out queueing the sync", http.StatusServiceUnavailable)
		}
		return
	}
	http.Error(w, "no runtime "+id, http.StatusNotFound)
}

// sweeper enqueues every runtime with recorded garden copies of registry credentials, at start and then at every
// interval: copies of runtimes deleted while the operator was down (no event announces them) are collected too.
// The record is in the KCP (ports.RegistryCacheLedger): the project's Secrets are never listed.
type sweeper struct {
	ledger     ports.RegistryCacheLedger
	namespaces []string
	interval   time.Duration
	events     chan<- event.TypedGenericEvent[reconcile.Request]
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: only the leader collects.
func (s *sweeper) NeedLeaderElection() bool { return true }

// Start implements manager.Runnable.
func (s *sweeper) Start(ctx context.Context) error {
	for {
		if err := s.sweep(ctx); err != nil {
			logf.FromContext(ctx).Error(err, "registry cache sweep failed")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(s.interval):
		}
	}
}

func (s *sweeper) sweep(ctx context.Context) error {
	for _, ns := range s.namespaces {
		ids, err := s.ledger.Runtimes(ctx, ns)
		if err != nil {
			return fmt.Errorf("list the records of registry credential copies in %s: %w", ns, err)
		}
		for _, id := range ids {
			select {
			case s.events <- event.TypedGenericEvent[reconcile.Request]{Object: requestFor(ns, id)}:
			case <-ctx.Done():
				return nil
			}
		}
	}
	return nil
}
