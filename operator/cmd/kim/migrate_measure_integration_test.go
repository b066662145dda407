package main

// What TestMigrationIntegration measures during the switch-over: the shoots' identity and spec before and after
// (snapshotShoots, compareShoots) and the kubeconfig Secrets as a concurrent reader sees them (secretReader).

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// shootState is what must not change when the operator adopts a shoot: its identity and its spec.
type shootState struct {
	uid        string
	generation int64
	spec       map[string]any
}

func snapshotShoots(t *testing.T, env *testEnv, ns string, names []string) map[string]shootState {
	t.Helper()
	out := map[string]shootState{}
	for _, n := range names {
		s := &gardencorev1beta1.Shoot{}
		if err := env.GardenClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: n}, s); err != nil {
			t.Fatal(err)
		}
		raw, err := yaml.Marshal(s.Spec)
		if err != nil {
			t.Fatal(err)
		}
		spec := map[string]any{}
		if err := yaml.Unmarshal(raw, &spec); err != nil {
			t.Fatal(err)
		}
		out[n] = shootState{uid: string(s.UID), generation: s.Generation, spec: spec}
	}
	return out
}

// secretReader reads every kubeconfig Secret in a loop, as KEB and lifecycle-manager may at any moment, and
// counts the reads that found no usable kubeconfig.
type secretReader struct {
	mu            sync.Mutex
	reads, failed int
	failures      []string
	stop          chan struct{}
	done          chan struct{}
}

func startSecretReader(env *testEnv, ids []string) *secretReader {
	r := &secretReader{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		for {
			for _, id := range ids {
				select {
				case <-r.stop:
					return
				default:
				}
				sec := &corev1.Secret{}
				err := env.KCPClient.Get(context.Background(), client.ObjectKey{Namespace: kcpNamespace, Name: "kubeconfig-" + id}, sec)
				problem := ""
				switch {
				case err != nil:
					problem = err.Error()
				default:
					problem = usableKubeconfig(sec.Data["config"])
				}
				r.mu.Lock()
				r.reads++
				if problem != "" {
					r.failed++
					if len(r.failures) < 10 {
						r.failures = append(r.failures, id+": "+problem)
					}
				}
				r.mu.Unlock()
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	return r
}

func (r *secretReader) finish() (reads, failed int, failures []string) {
	close(r.stop)
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reads, r.failed, r.failures
}

// compareShoots counts re-created shoots and changed spec fields; the switch of the shoot on a SecretBinding to its
// CredentialsBinding (and the generation it bumps) is the one expected change.
func compareShoots(t *testing.T, before, after map[string]shootState, pl *previousLandscape) (recreated, changed int) {
	t.Helper()
	binding := map[string]bool{}
	for _, r := range pl.good {
		binding[r.shoot] = r.binding
	}
	for name, b := range before {
		a := after[name]
		if a.uid != b.uid {
			recreated++
			t.Errorf("shoot %s was re-created", name)
			continue
		}
		bs, as := cloneMap(b.spec), cloneMap(a.spec)
		if binding[name] {
			if as["credentialsBindingName"] != legacyBinding || as["secretBindingName"] != nil {
				t.Errorf("shoot %s still uses SecretBinding %v (credentials binding %v)", name, as["secretBindingName"], as["credentialsBindingName"])
			}
			delete(bs, "secretBindingName")
			delete(as, "credentialsBindingName")
		}
		for _, d := range mapDifferences("spec", bs, as) {
			changed++
			t.Errorf("shoot %s: %s", name, d)
		}
		if !binding[name] && a.generation != b.generation {
			t.Errorf("shoot %s: generation %d -> %d", name, b.generation, a.generation)
		}
	}
	return recreated, changed
}

func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func mapDifferences(path string, a, b map[string]any) []string {
	var out []string
	for k := range a {
		if _, ok := b[k]; !ok {
			out = append(out, fmt.Sprintf("%s.%s removed", path, k))
		}
	}
	for k, bv := range b {
		av, ok := a[k]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s.%s added: %v", path, k, bv))
		case !reflect.DeepEqual(av, bv):
			am, aok := av.(map[string]any)
			bm, bok := bv.(map[string]any)
			if aok && bok {
				out = append(out, mapDifferences(path+"."+k, am, bm)...)
			} else {
				out = append(out, fmt.Sprintf("%s.%s: %v -> %v", path, k, av, bv))
			}
		}
	}
	return out
}

// usableKubeconfig returns why data is no usable kubeconfig ("" when it is): KEB needs a current context with a
// server and CA data.
func usableKubeconfig(data []byte) string {
	if len(data) == 0 {
		return "empty"
	}
	kc, err := clientcmd.Load(data)
	if err != nil {
		return "unparsable: " + err.Error()
	}
	cur := kc.Contexts[kc.CurrentContext]
	if cur == nil || kc.Clusters[cur.Cluster] == nil || kc.Clusters[cur.Cluster].Server == "" || len(kc.Clusters[cur.Cluster].CertificateAuthorityData) == 0 {
		return "no current context with server and CA"
	}
	return ""
}
