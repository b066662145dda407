package gardenercluster_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// secretVersions watches one kubeconfig Secret and judges every version the API server stores of it, where a
// reader polling the Secret only samples them (and a reader polling without pause made 36,000 reads in one test,
// CPU every other package of the run waited for).
type secretVersions struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	versions int      // versions seen after the start
	last     string   // the resourceVersion of the last version seen
	bad      []string // versions that were not a kubeconfig: deleted, or without data
	lost     error    // the watch could not go on from where it was (a version may be missing)
}

// watchSecretVersions starts watching the Secret namespace/name after resourceVersion rv (the version the test has
// already read).
func watchSecretVersions(t *testing.T, cfg *rest.Config, namespace, name, rv string) *secretVersions {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("clientset for the Secret's watch: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	lw := &cache.ListWatch{WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
		return cs.CoreV1().Secrets(namespace).Watch(ctx, o)
	}}
	// RetryWatcher resumes after a closed watch from the last version it delivered, so no version is skipped; a
	// version too old to resume from is an error event, recorded as lost.
	rw, err := watchtools.NewRetryWatcherWithContext(ctx, rv, lw)
	if err != nil {
		cancel()
		t.Fatalf("watch Secret %s/%s: %v", namespace, name, err)
	}
	v := &secretVersions{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(v.done)
		defer rw.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-rw.ResultChan():
				if !ok {
					return
				}
				v.judge(ev)
			}
		}
	}()
	t.Cleanup(func() { _, _, _ = v.stop() })
	return v
}

func (v *secretVersions) judge(ev watch.Event) {
	v.mu.Lock()
	defer v.mu.Unlock()
	switch ev.Type {
	case watch.Added, watch.Modified:
		s, ok := ev.Object.(*corev1.Secret)
		if !ok {
			v.bad = append(v.bad, fmt.Sprintf("%s of a %T", ev.Type, ev.Object))
			return
		}
		v.versions++
		v.last = s.ResourceVersion
		if len(s.Data["config"]) == 0 {
			v.bad = append(v.bad, fmt.Sprintf("version %s without a kubeconfig", s.ResourceVersion))
		}
	case watch.Deleted:
		v.versions++
		v.bad = append(v.bad, "the Secret was deleted")
	case watch.Error:
		if v.lost == nil {
			v.lost = fmt.Errorf("watch error: %v", ev.Object)
		}
	case watch.Bookmark:
	}
}

// seen reports whether the watch has delivered the version rv.
func (v *secretVersions) seen(rv string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.last == rv
}

// stop ends the watch and returns what it saw.
func (v *secretVersions) stop() (versions int, bad []string, lost error) {
	v.cancel()
	<-v.done
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.versions, v.bad, v.lost
}
