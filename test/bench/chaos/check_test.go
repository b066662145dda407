package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func kubeconfigFor(t *testing.T, shootName string) []byte {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	name := "kyma--" + shootName + "-external"
	kc.Clusters[name] = &clientcmdapi.Cluster{Server: "https://api." + shootName + ".example"}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: "t"}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	kc.CurrentContext = name
	data, err := clientcmd.Write(*kc)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// healthyWorld is a converged world after a chaos run: runtime a live and Ready; runtime b deleted at t0 and its
// shoot deleted after the window; runtime c deleted lately (its shoot carries the deletion record); runtime d
// deleted and created again inside the window (its cluster restored, not deleted); an unmanaged shoot.
func healthyWorld(t *testing.T) world {
	return world{
		Runtimes: []liveRuntime{{ID: "a", Shoot: "c-a", State: "Ready", WorkersMax: 5}, {ID: "d", Shoot: "c-d", State: "Ready", WorkersMax: 3}},
		Secrets: map[string]secret{
			"kubeconfig-a": {Kubeconfig: kubeconfigFor(t, "c-a"), ShootName: "c-a"},
			"kubeconfig-d": {Kubeconfig: kubeconfigFor(t, "c-d"), ShootName: "c-d"},
		},
		Shoots: []shoot{
			{Name: "c-a", RuntimeID: "a", Managed: true, WorkersMax: 5},
			{Name: "c-c", RuntimeID: "c", Managed: true, DeletionRecord: "c", WorkersMax: 3},
			{Name: "c-d", RuntimeID: "d", Managed: true, WorkersMax: 3},
			{Name: "someone-elses", Managed: false},
		},
		Deletions: []shootDeletion{{Name: "c-b", UID: "u-b", RuntimeID: "b", At: t0.Add(65 * time.Second), MarkedAt: t0.Add(4 * time.Second)}},
		History: []runtimeEvent{
			{ID: "a", Created: true, At: t0.Add(-time.Hour)}, {ID: "b", Created: true, At: t0.Add(-time.Hour)},
			{ID: "c", Created: true, At: t0.Add(-time.Hour)}, {ID: "d", Created: true, At: t0.Add(-time.Hour)},
			{ID: "b", Created: false, At: t0}, {ID: "d", Created: false, At: t0}, {ID: "d", Created: true, At: t0.Add(10 * time.Second)},
			{ID: "c", Created: false, At: t0.Add(2 * time.Minute)},
		},
		Rates: []rates{{Replica: "a", PerSecond: map[int64]int{t0.Unix(): 20, t0.Unix() + 1: 10, t0.Unix() + 2: 10, t0.Unix() + 60: 20},
			Starts: []int64{t0.Unix() - 5, t0.Unix() + 59}}},
		Limits: limits{QPS: 10, Burst: 20, HealthInterval: 3 * time.Second},
		Grace:  time.Minute, FaultsInjected: 100, HealthErrorSeen: true, HealthyAtEnd: true,
	}
}

func TestCheckHoldsOnAHealthyWorld(t *testing.T) {
	if v := check(healthyWorld(t)); len(v) != 0 {
		t.Fatalf("violations on a healthy world: %v", v)
	}
}

// Each invariant fails on a world that breaks it, and only that invariant.
func TestCheckFindsEveryBrokenInvariant(t *testing.T) {
	cases := []struct {
		name, invariant, detail string
		breakIt                 func(t *testing.T, w *world)
	}{
		{"runtime not Ready", invReady, `runtime a is "Pending"`, func(_ *testing.T, w *world) { w.Runtimes[0].State = "Pending" }},
		{"no kubeconfig Secret", invReady, "no kubeconfig Secret", func(_ *testing.T, w *world) { delete(w.Secrets, "kubeconfig-a") }},
		{"empty kubeconfig", invReady, "empty kubeconfig", func(_ *testing.T, w *world) { w.Secrets["kubeconfig-a"] = secret{ShootName: "c-a"} }},
		{"unparseable kubeconfig", invReady, "unparseable", func(_ *testing.T, w *world) {
			w.Secrets["kubeconfig-a"] = secret{Kubeconfig: []byte("{not yaml"), ShootName: "c-a"}
		}},
		{"kubeconfig of another shoot", invReady, "does not name shoot", func(t *testing.T, w *world) {
			w.Secrets["kubeconfig-a"] = secret{Kubeconfig: kubeconfigFor(t, "c-x"), ShootName: "c-a"}
		}},
		{"Secret issued for another shoot", invReady, `issued for shoot "c-x"`, func(t *testing.T, w *world) {
			w.Secrets["kubeconfig-a"] = secret{Kubeconfig: kubeconfigFor(t, "c-a"), ShootName: "c-x"}
		}},
		{"no shoot", invOneShoot, "has 0 shoots", func(_ *testing.T, w *world) { w.Shoots = w.Shoots[1:] }},
		{"two shoots", invOneShoot, "has 2 shoots", func(_ *testing.T, w *world) {
			w.Shoots = append(w.Shoots, shoot{Name: "c-a2", RuntimeID: "a", Managed: true, WorkersMax: 5})
		}},
		{"live runtime's shoot still marked", invOneShoot, "deletion record", func(_ *testing.T, w *world) { w.Shoots[2].DeletionRecord = "d" }},
		{"worker change not applied", invOneShoot, "workers maximum 4", func(_ *testing.T, w *world) { w.Shoots[0].WorkersMax = 4 }},
		{"orphan", invNoOrphan, "c-c", func(_ *testing.T, w *world) { w.Shoots[1].DeletionRecord = "" }},
		{"deleted before the window", invWindow, "deleted at", func(_ *testing.T, w *world) { w.Deletions[0].At = t0.Add(30 * time.Second) }},
		{"deleted before the window of its record", invWindow, "after its deletion record's mark", func(_ *testing.T, w *world) {
			w.Deletions[0].MarkedAt = t0.Add(10 * time.Second)
		}},
		{"deleted without a record", invWindow, "without a deletion record", func(_ *testing.T, w *world) { w.Deletions[0].MarkedAt = time.Time{} }},
		{"record older than the runtime's deletion", invWindow, "before runtime b was deleted", func(_ *testing.T, w *world) {
			w.Deletions[0].MarkedAt = t0.Add(-5 * time.Second)
		}},
		{"deleted while the runtime exists", invWindow, "while runtime d existed", func(_ *testing.T, w *world) {
			w.Deletions = append(w.Deletions, shootDeletion{Name: "c-d", RuntimeID: "d", At: t0.Add(70 * time.Second), MarkedAt: t0})
		}},
		{"deleted without a runtime deletion", invWindow, "never deleted", func(_ *testing.T, w *world) {
			w.Deletions = append(w.Deletions, shootDeletion{Name: "c-z", RuntimeID: "z", At: t0})
		}},
		{"empty Secret read", invEmptyRead, "kubeconfig-a", func(_ *testing.T, w *world) {
			w.BadReads = []string{"10:00:01.000: Secret kubeconfig-a: empty kubeconfig"}
		}},
		{"burst above the allowance", invQPS, "requests in the", func(_ *testing.T, w *world) { w.Rates[0].PerSecond[t0.Unix()+1] = 60 }},
		{"sustained rate above QPS", invQPS, "requests in the", func(_ *testing.T, w *world) {
			for s := range int64(60) {
				w.Rates[0].PerSecond[t0.Unix()+100+s] = 13
			}
		}},
		{"health never showed the faults", invHealth, "never showed", func(_ *testing.T, w *world) { w.HealthErrorSeen = false }},
		{"health not back", invHealth, "not healthy", func(_ *testing.T, w *world) { w.HealthyAtEnd = false }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := healthyWorld(t)
			tc.breakIt(t, &w)
			onlyBroken(t, w, tc.invariant, tc.detail)
		})
	}
}

// onlyBroken fails unless check finds w breaking invariant, and only it, the first violation saying detail.
func onlyBroken(t *testing.T, w world, invariant, detail string) {
	t.Helper()
	v := check(w)
	if len(v) == 0 {
		t.Fatal("no violation")
	}
	for _, x := range v {
		if x.Invariant != invariant {
			t.Errorf("violation of another invariant: %s", x)
		}
	}
	if !strings.Contains(v[0].Detail, detail) {
		t.Errorf("violation %q does not say %q", v[0].Detail, detail)
	}
}

// A new manager process starts with a full burst: what one process may not do, two may.
func TestQPSAllowsABurstPerProcess(t *testing.T) {
	w := healthyWorld(t)
	w.Rates[0].Starts = []int64{t0.Unix() - 5, t0.Unix() + 60}
	w.Rates[0].PerSecond[t0.Unix()+60] = 25
	w.Rates[0].PerSecond[t0.Unix()+61] = 35
	if v := checkQPS(w); len(v) != 0 {
		t.Errorf("a restart's burst counted as a breach: %v", v)
	}
	w.Rates[0].Starts = w.Rates[0].Starts[:1]
	if v := checkQPS(w); len(v) == 0 {
		t.Error("two bursts of one process not found")
	}
}

func TestSecretReaderRecordsUnusableKubeconfigs(t *testing.T) {
	r := &secretReader{}
	good := kubeconfigFor(t, "c-a")
	r.inspect(secretsOf(map[string][]byte{"kubeconfig-a": good, "kubeconfig-b": nil, "kubeconfig-c": []byte("x: ["), "other": nil}), t0)
	reads, bad := r.result()
	if reads != 3 || len(bad) != 2 || !strings.Contains(strings.Join(bad, "\n"), "kubeconfig-b") || !strings.Contains(strings.Join(bad, "\n"), "kubeconfig-c") {
		t.Errorf("reads %d, bad %v: want 3 reads and kubeconfig-b and -c bad", reads, bad)
	}
}

func secretsOf(data map[string][]byte) []corev1.Secret {
	var out []corev1.Secret
	for name, kc := range data {
		s := corev1.Secret{Data: map[string][]byte{kubeconfig.SecretKey: kc}}
		s.Name = name
		out = append(out, s)
	}
	return out
}

// The healthy world's runtime c was deleted lately: its shoot waits for its window, and the run waits for it. A shoot
// being deleted, a live Runtime's and someone else's are not pending.
func TestPendingDeletionsAreTheShootsOfDeletedRuntimes(t *testing.T) {
	w := healthyWorld(t)
	if got, want := pendingDeletions(w), []string{"shoot c-c (runtime c)"}; !slices.Equal(got, want) {
		t.Fatalf("pending %v, want %v", got, want)
	}
	w.Shoots[1].Deleting = true
	if got := pendingDeletions(w); len(got) != 0 {
		t.Fatalf("pending %v once c-c is being deleted", got)
	}
}
