package gardener

import (
	"context"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/ports"
)

// TestInSyncComparesOnlyWhenSomethingItReadsChanged: a shoot found in sync is not compared again while Gardener
// only reports on it (status, resourceVersion); a changed apply, spec (a new generation), label or annotation, or a
// re-created shoot is compared again, and the answer is the comparison's.
func TestInSyncComparesOnlyWhenSomethingItReadsChanged(t *testing.T) {
	a := goldenApplies(t)["aws"]
	a.Spec.Authentication = nil // the ConfigMap's part: TestInSyncRemembersTheAuthenticationConfigMapsVersion
	base := serverShoot(t, a, true, false)
	for _, tc := range []struct {
		name       string
		change     func(s *gardencorev1beta1.Shoot, a *ports.ShootApply)
		compared   int
		wantInSync bool
	}{
		{name: "a status report", change: func(s *gardencorev1beta1.Shoot, _ *ports.ShootApply) {
			s.ResourceVersion = "4712"
			s.Status.LastOperation.Description = "reconciled again"
		}, compared: 1, wantInSync: true},
		{name: "a new Runtime generation", change: func(_ *gardencorev1beta1.Shoot, a *ports.ShootApply) { a.RuntimeGeneration++ },
			compared: 2, wantInSync: false},
		{name: "another spec wanted", change: func(_ *gardencorev1beta1.Shoot, a *ports.ShootApply) { a.Spec.Workers[0].Maximum++ },
			compared: 2, wantInSync: false},
		{name: "the spec changed (new generation)", change: func(s *gardencorev1beta1.Shoot, _ *ports.ShootApply) {
			s.Generation++
			s.Spec.Provider.Workers[0].Maximum++
		}, compared: 2, wantInSync: false},
		{name: "an annotation removed", change: func(s *gardencorev1beta1.Shoot, _ *ports.ShootApply) {
			delete(s.Annotations, shoot.AnnotationRuntimeGeneration)
		}, compared: 2, wantInSync: false},
		{name: "an unrelated annotation added", change: func(s *gardencorev1beta1.Shoot, _ *ports.ShootApply) {
			s.Annotations["example.com/other"] = "x"
		}, compared: 2, wantInSync: true},
		{name: "the shoot re-created", change: func(s *gardencorev1beta1.Shoot, _ *ports.ShootApply) { s.UID += "-2" },
			compared: 2, wantInSync: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			cache := newMapClient(cached(t, base))
			adapter := &Shoots{Client: cache, Live: cache, Namespace: base.Namespace, RuntimeNamespace: "kcp-system"}
			first, err := adapter.InSync(ctx, a)
			if err != nil || !first.InSync {
				t.Fatalf("first InSync: %+v, %v; want in sync", first, err)
			}
			s, changed := base.DeepCopy(), a
			changed.Spec.Workers = append([]shoot.WorkerSpec(nil), a.Spec.Workers...)
			tc.change(s, &changed)
			cache.objs[objKey(s, client.ObjectKeyFromObject(s))] = cached(t, s)
			in, err := adapter.InSync(ctx, changed)
			if err != nil || in.InSync != tc.wantInSync || adapter.inSync.compared != tc.compared {
				t.Errorf("InSync %+v (%v) after %d comparisons; want %v after %d", in, err, adapter.inSync.compared, tc.wantInSync, tc.compared)
			}
			// A fresh process given the record of the first answer (the Runtime's status keeps it) answers the
			// same, and compares only where the process that made the record compared again.
			fresh := &Shoots{Client: cache, Live: cache, Namespace: base.Namespace, RuntimeNamespace: "kcp-system"}
			changed.InSyncRecord = first.Record
			got, err := fresh.InSync(ctx, changed)
			if err != nil || got != in || fresh.inSync.compared != tc.compared-1 {
				t.Errorf("InSync given the record: %+v (%v) after %d comparisons; want %+v after %d", got, err, fresh.inSync.compared, in, tc.compared-1)
			}
		})
	}
}

// TestInSyncForgetsAGoneShoot: a shoot that is gone leaves nothing behind.
func TestInSyncForgetsAGoneShoot(t *testing.T) {
	a := goldenApplies(t)["aws"]
	a.Spec.Authentication = nil
	s := serverShoot(t, a, true, false)
	cache := newMapClient(cached(t, s))
	adapter := &Shoots{Client: cache, Live: cache, Namespace: s.Namespace, RuntimeNamespace: "kcp-system"}
	if in, err := adapter.InSync(context.Background(), a); err != nil || !in.InSync {
		t.Fatalf("InSync: %+v, %v", in, err)
	}
	delete(cache.objs, objKey(s, client.ObjectKeyFromObject(s)))
	if in, err := adapter.InSync(context.Background(), a); err != nil || in != (ports.SyncCheck{}) {
		t.Fatalf("InSync of a gone shoot: %+v, %v", in, err)
	}
	if n := len(adapter.inSync.byName); n != 0 {
		t.Errorf("%d shoots remembered after the shoot went", n)
	}
}

// TestInSyncRemembersTheAuthenticationConfigMapsVersion: the structured-authentication ConfigMap is part of the
// remembered answer by its UID and resourceVersion: while they stay, a Gardener report costs no comparison and no
// rendering of the ConfigMap; a ConfigMap written again (same content or changed), re-created or gone is looked
// at again, and the answer is the comparison's.
func TestInSyncRemembersTheAuthenticationConfigMapsVersion(t *testing.T) {
	var a ports.ShootApply
	for _, golden := range goldenApplies(t) {
		if golden.Spec.Authentication != nil {
			a = golden
			break
		}
	}
	if a.Spec.Authentication == nil {
		t.Fatal("no golden runtime with structured authentication")
	}
	s := serverShoot(t, a, true, false)
	for _, tc := range []struct {
		name       string
		change     func(cm *corev1.ConfigMap) *corev1.ConfigMap // nil: the ConfigMap is gone
		compared   int
		wantInSync bool
	}{
		{name: "a status report on the shoot", change: func(cm *corev1.ConfigMap) *corev1.ConfigMap { return cm }, compared: 1, wantInSync: true},
		{name: "written again, same content", change: func(cm *corev1.ConfigMap) *corev1.ConfigMap {
			cm.ResourceVersion = "816"
			return cm
		}, compared: 2, wantInSync: true},
		{name: "changed by someone", change: func(*corev1.ConfigMap) *corev1.ConfigMap {
			cm := authConfigMap(t, a, s, true)
			cm.ResourceVersion = "816"
			return cm
		}, compared: 2, wantInSync: false},
		{name: "re-created", change: func(cm *corev1.ConfigMap) *corev1.ConfigMap {
			cm.UID += "-2"
			return cm
		}, compared: 2, wantInSync: true},
		{name: "gone", change: func(*corev1.ConfigMap) *corev1.ConfigMap { return nil }, compared: 2, wantInSync: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			cm := authConfigMap(t, a, s, false)
			cm.UID = "cm-uid"
			cache := newMapClient(cached(t, s), cached(t, cm))
			adapter := &Shoots{Client: cache, Live: cache, Namespace: s.Namespace, RuntimeNamespace: "kcp-system"}
			first, err := adapter.InSync(ctx, a)
			if err != nil || !first.InSync {
				t.Fatalf("first InSync: %+v, %v; want in sync", first, err)
			}
			key := objKey(cm, client.ObjectKeyFromObject(cm))
			if changed := tc.change(cm.DeepCopy()); changed != nil {
				cache.objs[key] = cached(t, changed)
			} else {
				delete(cache.objs, key)
			}
			in, err := adapter.InSync(ctx, a)
			if err != nil || in.InSync != tc.wantInSync || adapter.inSync.compared != tc.compared {
				t.Errorf("InSync %+v (%v) after %d comparisons; want %v after %d", in, err, adapter.inSync.compared, tc.wantInSync, tc.compared)
			}
			fresh := &Shoots{Client: cache, Live: cache, Namespace: s.Namespace, RuntimeNamespace: "kcp-system"}
			withRecord := a
			withRecord.InSyncRecord = first.Record
			got, err := fresh.InSync(ctx, withRecord)
			if err != nil || got != in || fresh.inSync.compared != tc.compared-1 {
				t.Errorf("InSync given the record: %+v (%v) after %d comparisons; want %+v after %d", got, err, fresh.inSync.compared, in, tc.compared-1)
			}
		})
	}
}
