package gardenercluster

import (
	"bytes"
	"context"
	"testing"

	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/domain/shootstate"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/ports"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

const victim = "victim-0000-4000-8000-000000000002"

func secretAt(name string) ports.SecretRef {
	return ports.SecretRef{Namespace: "kcp-system", Name: name, Key: "config"}
}

// TestGardenerClusterCannotOverwriteForeignSecrets: a GardenerCluster is a request anyone who may create one in the
// KCP can make. It must not make the operator overwrite another runtime's kubeconfig or any other Secret, write
// outside its namespace, or delete what it does not own.
func TestGardenerClusterCannotOverwriteForeignSecrets(t *testing.T) {
	victimData := []byte("the victim's kubeconfig")
	cases := []struct {
		reason     string
		secret     string
		namespace  string
		put        func(*fake.KubeconfigSecretStore)
		wantReason string
	}{
		{"another runtime's kubeconfig Secret (owned by its GardenerCluster)", "kubeconfig-" + victim, "kcp-system",
			func(s *fake.KubeconfigSecretStore) {
				s.Put("kcp-system", "kubeconfig-"+victim, map[string][]byte{"config": victimData},
					map[string]string{wire.LabelManagedBy: wire.ManagedByValue, kubeconfig.LabelClusterName: victim},
					map[string]string{kubeconfig.AnnotationOwner: "kcp-system/" + victim})
			}, string(kubeconfig.ReasonSecretNotOwned)},
		{"another runtime's legacy KEB Secret (no owner, its runtime in the name and label)", "kubeconfig-" + victim, "kcp-system",
			func(s *fake.KubeconfigSecretStore) {
				s.Put("kcp-system", "kubeconfig-"+victim, map[string][]byte{"config": victimData},
					map[string]string{kubeconfig.LabelRuntimeID: victim}, nil)
			}, string(kubeconfig.ReasonSecretNotOwned)},
		{"a Secret that is no kubeconfig Secret at all", "keb-database-credentials", "kcp-system",
			func(s *fake.KubeconfigSecretStore) {
				s.Put("kcp-system", "keb-database-credentials", map[string][]byte{"config": victimData}, nil, nil)
			}, string(kubeconfig.ReasonSecretNotOwned)},
		{"a Secret in another namespace", "kubeconfig-" + rid, "kube-system",
			func(s *fake.KubeconfigSecretStore) {
				s.Put("kube-system", "kubeconfig-"+rid, map[string][]byte{"config": victimData}, nil, nil)
			}, string(kubeconfig.ReasonSecretNamespace)},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			gc := kebCluster(rid, "c-1a2b3c")
			gc.Spec.Kubeconfig.Secret.Name, gc.Spec.Kubeconfig.Secret.Namespace = tc.secret, tc.namespace
			w := newWorld(t, gc)
			w.issuer.AddShoot("c-1a2b3c")
			tc.put(w.store)
			w.reconcile(rid)
			ref := ports.SecretRef{Namespace: tc.namespace, Name: tc.secret, Key: "config"}
			if got, _ := w.store.Kubeconfig(ref); !bytes.Equal(got, victimData) {
				t.Errorf("%s: the Secret was changed to %q", tc.reason, got)
			}
			if n := w.issuer.TotalCalls(); n != 0 {
				t.Errorf("%s: %d Gardener calls for a refused GardenerCluster", tc.reason, n)
			}
			if c := w.condition(rid); c.Reason != tc.wantReason || w.get(rid).Status.State != imv1.GardenerClusterStateError {
				t.Errorf("%s: condition %s (%s), state %s; want %s and Error", tc.reason, c.Reason, c.Message, w.get(rid).Status.State, tc.wantReason)
			}
			// Deleting the GardenerCluster must not delete what it never owned.
			if err := w.client.Delete(context.Background(), w.get(rid)); err != nil {
				t.Fatal(err)
			}
			w.reconcile(rid)
			if !w.store.Exists(tc.namespace, tc.secret) {
				t.Errorf("%s: deleting the GardenerCluster deleted a Secret it did not own", tc.reason)
			}
		})
	}
}

// TestLegacySecretOfTheSameRuntimeIsTakenOver: KEB used to create kubeconfig-<runtimeID> itself; the
// GardenerCluster of that runtime takes it over (and from then on owns it).
func TestLegacySecretOfTheSameRuntimeIsTakenOver(t *testing.T) {
	w := newWorld(t, kebCluster(rid, "c-1a2b3c"))
	w.issuer.AddShoot("c-1a2b3c")
	w.store.Put("kcp-system", "kubeconfig-"+rid, map[string][]byte{"config": []byte("keb's")},
		map[string]string{kubeconfig.LabelRuntimeID: rid}, nil)
	w.reconcile(rid)
	got, _ := w.store.Kubeconfig(secretAt("kubeconfig-" + rid))
	if bytes.Equal(got, []byte("keb's")) || w.issuer.TotalCalls() != 1 {
		t.Fatalf("the runtime's own legacy Secret was not taken over: %q, %d calls", got, w.issuer.TotalCalls())
	}
	md, _ := w.store.ReadMetadata(context.Background(), secretAt("kubeconfig-"+rid), ports.ReadLive)
	if md.Annotations[kubeconfig.AnnotationOwner] != "kcp-system/"+rid {
		t.Errorf("owner not recorded: %v", md.Annotations)
	}
}

// TestShootOfAnotherRuntimeGetsNoKubeconfig: a GardenerCluster naming someone else's shoot, or the shoot of a
// deleted runtime, gets no admin kubeconfig.
func TestShootOfAnotherRuntimeGetsNoKubeconfig(t *testing.T) {
	for _, pending := range []bool{false, true} {
		w := newWorld(t, kebCluster(rid, "c-victim"))
		w.issuer.AddShoot("c-victim")
		garden := fake.NewGarden(w.clock)
		owner := victim
		if pending {
			owner = rid // its own runtime, but deleted: the shoot waits for deletion
		}
		if _, err := garden.Apply(context.Background(), ports.ShootApply{Spec: shoot.Spec{Name: "c-victim"}, RuntimeID: owner}); err != nil {
			t.Fatal(err)
		}
		if pending {
			if _, err := garden.MarkForDeletion(context.Background(), "c-victim", ports.DeletionMark{
				Record: shootstate.PendingDeletion{RuntimeID: rid, MarkedAt: start, DueAt: start}}); err != nil {
				t.Fatal(err)
			}
		}
		w.setShoots(garden)
		w.reconcile(rid)
		if n := w.issuer.TotalCalls(); n != 0 || w.store.Exists("kcp-system", "kubeconfig-"+rid) {
			t.Errorf("pending=%v: kubeconfig of another runtime's shoot issued (%d calls)", pending, n)
		}
		if c := w.condition(rid); c.Reason != string(kubeconfig.ReasonShootNotOfRuntime) {
			t.Errorf("pending=%v: reason %s (%s), want %s", pending, c.Reason, c.Message, string(kubeconfig.ReasonShootNotOfRuntime))
		}
	}
}

// TestShootRecreatedMeansNewKubeconfig: the Secret records the shoot (name and UID) it was issued for; a shoot
// created again under the same name gets a new kubeconfig at once, not at the next rotation.
func TestShootRecreatedMeansNewKubeconfig(t *testing.T) {
	w := newWorld(t, kebCluster(rid, "c-1a2b3c"))
	w.issuer.AddShoot("c-1a2b3c")
	garden := fake.NewGarden(w.clock)
	apply := func() {
		if _, err := garden.Apply(context.Background(), ports.ShootApply{Spec: shoot.Spec{Name: "c-1a2b3c"}, RuntimeID: rid}); err != nil {
			t.Fatal(err)
		}
	}
	apply()
	w.setShoots(garden)
	w.reconcile(rid)
	if w.issuer.TotalCalls() != 1 {
		t.Fatalf("first kubeconfig: %d calls", w.issuer.TotalCalls())
	}
	w.reconcile(rid)
	if w.issuer.TotalCalls() != 1 {
		t.Fatalf("the same shoot got a second kubeconfig")
	}
	// The shoot is deleted and created again under its name (a new UID).
	s, _ := garden.Get(context.Background(), "c-1a2b3c", ports.ReadLive)
	if _, err := garden.MarkForDeletion(context.Background(), "c-1a2b3c", ports.DeletionMark{Record: shootstate.PendingDeletion{RuntimeID: rid, MarkedAt: start, DueAt: start}}); err != nil {
		t.Fatal(err)
	}
	if err := garden.Delete(context.Background(), "c-1a2b3c", ports.Precondition{UID: s.UID}); err != nil {
		t.Fatal(err)
	}
	garden.FinishDeletion("c-1a2b3c")
	apply()
	w.reconcile(rid)
	if w.issuer.TotalCalls() != 2 {
		t.Fatalf("a re-created shoot did not get a new kubeconfig (%d calls)", w.issuer.TotalCalls())
	}
	md, _ := w.store.ReadMetadata(context.Background(), secretAt("kubeconfig-"+rid), ports.ReadLive)
	now, _ := garden.Get(context.Background(), "c-1a2b3c", ports.ReadLive)
	if md.Annotations[kubeconfig.AnnotationShootUID] != now.UID || now.UID == s.UID {
		t.Errorf("recorded shoot uid %q, shoot uid %q (was %q)", md.Annotations[kubeconfig.AnnotationShootUID], now.UID, s.UID)
	}
}
