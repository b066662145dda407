package gardener

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim/adapters/gardener/translate"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/internal/mapping"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/test/testenv/goldenshoots"
)

// mapClient serves Get from a fixed set of objects (an API server, or a cache holding transformed copies) and
// counts the reads; every other method is unimplemented (nil embedded client): the decisions compared here write
// nothing.
type mapClient struct {
	client.Client
	objs  map[string]client.Object
	reads *int
}

func objKey(obj client.Object, key client.ObjectKey) string { return fmt.Sprintf("%T/%s", obj, key) }

func newMapClient(objs ...client.Object) mapClient {
	m := mapClient{objs: map[string]client.Object{}, reads: new(int)}
	for _, o := range objs {
		m.objs[objKey(o, client.ObjectKeyFromObject(o))] = o
	}
	return m
}

func (m mapClient) Get(_ context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	*m.reads++
	src, ok := m.objs[objKey(obj, key)]
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{}, key.Name)
	}
	var o client.GetOptions
	o.ApplyOptions(opts)
	if o.UnsafeDisableDeepCopy != nil && *o.UnsafeDisableDeepCopy {
		// As controller-runtime's cache: the stored object itself (here its top level copied, every map, slice
		// and pointer in it shared), so a reader that changes it changes what is stored.
		reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(src).Elem())
		return nil
	}
	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(src.DeepCopyObject()).Elem())
	return nil
}

// cached is what the garden cache holds of obj (a copy passed through CacheTransform).
func cached[T client.Object](t *testing.T, obj T) T {
	t.Helper()
	out, err := CacheTransform(obj.DeepCopyObject())
	if err != nil {
		t.Fatal(err)
	}
	return out.(T)
}

// goldenApplies returns, per golden runtime that generates a shoot, the apply the Runtime controller sends.
func goldenApplies(t *testing.T) map[string]ports.ShootApply {
	t.Helper()
	files, err := filepath.Glob("testdata/runtimes/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden runtimes: %v", err)
	}
	out := map[string]ports.ShootApply{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cr imv1.Runtime
		if err := yaml.Unmarshal(data, &cr); err != nil {
			t.Fatal(err)
		}
		spec, err := shoot.Generate(mapping.Runtime(&cr), goldenshoots.Config(t, name))
		if err != nil {
			continue // a runtime that must be rejected has no shoot
		}
		out[name] = ports.ShootApply{Spec: spec, RuntimeID: cr.Name, RuntimeGeneration: 2, SpecHash: "hash-" + name, Plan: "aws"}
	}
	return out
}

// serverShoot is the shoot the garden would hold for a: what the operator applies, with Gardener's status, and
// managedFields saying who wrote it (applied: the operator's Apply entry; otherwise the previous provisioner's
// update only). drift changes a value the apply sets.
func serverShoot(t *testing.T, a ports.ShootApply, applied, drift bool) *gardencorev1beta1.Shoot {
	t.Helper()
	s, err := (&Shoots{Namespace: a.Spec.Namespace, RuntimeNamespace: "kcp-system"}).desired(a, nil)
	if err != nil {
		t.Fatal(err)
	}
	at := metav1.NewTime(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
	s.UID, s.ResourceVersion, s.Generation = types.UID("uid-"+s.Name), "4711", 3
	s.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "gardenlet", Operation: metav1.ManagedFieldsOperationUpdate, Time: &at,
		FieldsV1: metav1.NewFieldsV1(`{"f:status":{"f:conditions":{}}}`)}}
	if applied {
		s.ManagedFields = append(s.ManagedFields, metav1.ManagedFieldsEntry{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationApply, Time: &at,
			FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:provider":{}}}`)})
	} else {
		s.ManagedFields = append(s.ManagedFields, metav1.ManagedFieldsEntry{Manager: "provisioner", Operation: metav1.ManagedFieldsOperationUpdate, Time: &at})
	}
	if drift {
		s.Spec.Kubernetes.Version = "1.20.1"
		s.Spec.Provider.Workers[0].Maximum++
	}
	s.Spec.SeedName = ptr.To("aws-eu1")
	s.Spec.Hibernation = &gardencorev1beta1.Hibernation{Enabled: ptr.To(drift),
		Schedules: []gardencorev1beta1.HibernationSchedule{{Start: ptr.To("00 20 * * 1,2,3,4,5")}}}
	s.Status = fullShoot(t).Status
	s.Status.ObservedGeneration = 3
	return s
}

// authConfigMap is the structured-authentication ConfigMap of a as the operator writes it, owned by s; changed
// alters one value.
func authConfigMap(t *testing.T, a ports.ShootApply, s *gardencorev1beta1.Shoot, changed bool) *corev1.ConfigMap {
	t.Helper()
	data, err := translate.AuthenticationConfigMapData(a.Spec.Authentication)
	if err != nil {
		t.Fatal(err)
	}
	if changed {
		data[translate.AuthenticationConfigKey] += "\n# changed"
	}
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: a.Spec.Authentication.ConfigMapName,
		ResourceVersion: "815", Labels: map[string]string{wire.LabelManagedBy: wire.ManagedByValue},
		OwnerReferences: []metav1.OwnerReference{shootOwnerReference(s)}}, Data: data}
}

// decisions is everything the operator decides on a shoot read through adapter (whose Client is either the API
// server itself or a cache of transformed copies, and whose Live is the API server).
type decisions struct {
	Observed           any
	Current            any
	InSync             bool
	AdoptedInSync      bool
	AdoptionDifference []Difference
	RegistryCache      any
	RegistryEvents     any
}

func decide(t *testing.T, adapter *Shoots, a ports.ShootApply) decisions {
	t.Helper()
	ctx := context.Background()
	var d decisions
	var err error
	if d.Observed, err = adapter.Get(ctx, a.Spec.Name, ports.ReadCached); err != nil {
		t.Fatal(err)
	}
	if d.Current, err = adapter.Current(ctx, a.Spec.Name); err != nil {
		t.Fatal(err)
	}
	sync, err := adapter.InSync(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	d.InSync = sync.InSync
	// Adoption decides on the shoot Apply reads (get) and the ConfigMap holdAdopted reads live.
	current, err := adapter.get(ctx, a.Spec.Name)
	if err != nil {
		t.Fatal(err)
	}
	desired, err := adapter.desired(a, current)
	if err != nil {
		t.Fatal(err)
	}
	if d.AdoptedInSync, err = adoptedInSync(current, desired); err != nil {
		t.Fatal(err)
	}
	var liveAuth map[string]string
	if a.Spec.Authentication != nil {
		cm := &corev1.ConfigMap{}
		if err := adapter.Live.Get(ctx, client.ObjectKey{Namespace: current.Namespace, Name: a.Spec.Authentication.ConfigMapName}, cm); err == nil {
			liveAuth = cm.Data
		}
	}
	if d.AdoptionDifference, err = AdoptionDifferences(current, liveAuth, a); err != nil {
		t.Fatal(err)
	}
	// The registry cache controller: the cached view of the shoot, and what its shoot event handler compares
	// (operator/controllers/registrycache/events.go: the registry-cache extensions, the number of resources, Observe).
	rc := &RegistryCacheGarden{Cached: adapter.Client, Live: adapter.Live, Namespace: adapter.Namespace}
	if d.RegistryCache, err = rc.Shoot(ctx, a.Spec.Name, ports.ReadCached); err != nil {
		t.Fatal(err)
	}
	s := &gardencorev1beta1.Shoot{}
	if err := adapter.Client.Get(ctx, client.ObjectKey{Namespace: adapter.Namespace, Name: a.Spec.Name}, s); err != nil {
		t.Fatal(err)
	}
	var exts []gardencorev1beta1.Extension
	for _, e := range s.Spec.Extensions {
		if e.Type == shoot.ExtensionRegistryCache {
			exts = append(exts, e)
		}
	}
	d.RegistryEvents = []any{exts, len(s.Spec.Resources), Observe(s).Reconciled()}
	return d
}

// TestCacheTrimmingKeepsDecisions pins the trimming of the garden cache (shoots the operator never applied lose
// their spec, ConfigMaps their data): for every golden shoot, applied by the operator or not, in sync or drifted,
// with its authentication ConfigMap as written or changed, the operator decides the same whether it reads the
// API server's objects or the cache's trimmed copies (reading live where a copy is trimmed).
func TestCacheTrimmingKeepsDecisions(t *testing.T) {
	applies := goldenApplies(t)
	if len(applies) < 10 {
		t.Fatalf("only %d golden shoots", len(applies))
	}
	seen := map[string]bool{}
	for name, a := range applies {
		for _, applied := range []bool{true, false} {
			for _, drift := range []bool{false, true} {
				for _, cmChanged := range []bool{false, true} {
					if cmChanged && a.Spec.Authentication == nil {
						continue
					}
					t.Run(fmt.Sprintf("%s/applied=%v/drift=%v/cm-changed=%v", name, applied, drift, cmChanged), func(t *testing.T) {
						s := serverShoot(t, a, applied, drift)
						objs := []client.Object{s}
						cachedObjs := []client.Object{cached(t, s)}
						if a.Spec.Authentication != nil {
							cm := authConfigMap(t, a, s, cmChanged)
							objs, cachedObjs = append(objs, cm), append(cachedObjs, cached(t, cm))
						}
						server, cache := newMapClient(objs...), newMapClient(cachedObjs...)
						full := decide(t, &Shoots{Client: server, Live: server, Namespace: s.Namespace, RuntimeNamespace: "kcp-system"}, a)
						live := *server.reads
						trimmed := decide(t, &Shoots{Client: cache, Live: server, Namespace: s.Namespace, RuntimeNamespace: "kcp-system"}, a)
						if !reflect.DeepEqual(full, trimmed) {
							t.Errorf("decisions differ:\n full:    %+v\n trimmed: %+v", full, trimmed)
						}
						// Only a shoot with a trimmed spec costs live reads (Current, InSync, Apply's read; plus the
						// one the test itself makes for the adoption's ConfigMap).
						liveReads := *server.reads - live
						if applied && liveReads > 1 || !applied && liveReads < 3 {
							t.Errorf("%d live reads of the API server, applied=%v", liveReads, applied)
						}
						seen[fmt.Sprintf("in-sync=%v", full.InSync)] = true
						seen[fmt.Sprintf("adopted-in-sync=%v", full.AdoptedInSync)] = true
						seen[fmt.Sprintf("registry-caches=%v", len(full.RegistryEvents.([]any)[0].([]gardencorev1beta1.Extension)) > 0)] = true
					})
				}
			}
		}
	}
	// The comparison is worth something only if the decisions vary.
	for _, k := range []string{"in-sync=true", "in-sync=false", "adopted-in-sync=true", "adopted-in-sync=false",
		"registry-caches=true", "registry-caches=false"} {
		if !seen[k] {
			t.Errorf("no case with %s: %v", k, seen)
		}
	}
}

// TestCacheRecordsCannotBeForged: the markers of a trimmed copy are believed only as this process's transform
// made them for that very version. A marker on the server (even one naming the object's own version, even a
// correct record copied from the cache) never makes a full object count as trimmed, and none stops an object
// from being trimmed.
func TestCacheRecordsCannotBeForged(t *testing.T) {
	a := goldenApplies(t)["aws"]
	for _, applied := range []bool{true, false} {
		s := serverShoot(t, a, applied, false)
		for _, forged := range []string{"4711", "4711::", "4711:0123456789abcdef0123456789abcdef:", cacheRecord(annotationCachedSpec, "4711", "")} {
			s.Annotations[annotationCachedSpec] = forged
			if forged == cacheRecord(annotationCachedSpec, "4711", "") {
				// A record of this process on the server: the shoot's version then is another one.
				s.ResourceVersion = "4712"
			}
			got := cached(t, s)
			if got.Annotations[annotationCachedSpec] == forged {
				t.Errorf("applied=%v: the server's marker %q stayed on the cached copy", applied, forged)
			}
			if specTrimmed(got) == applied || reflect.DeepEqual(got.Spec, s.Spec) != applied {
				t.Errorf("applied=%v, marker %q on the server: cached copy trimmed=%v", applied, forged, specTrimmed(got))
			}
			if specTrimmed(s) {
				t.Errorf("a shoot read live with marker %q counts as trimmed", forged)
			}
		}
	}
	cm := authConfigMap(t, a, serverShoot(t, a, true, false), false)
	want := cm.Data[translate.AuthenticationConfigKey]
	copied := cached(t, cm).Annotations[annotationCachedDigests]
	for _, forged := range []string{"815:" + digest("x"), "815::" + translate.AuthenticationConfigKey + "=" + digest("x"), copied} {
		for _, withData := range []bool{true, false} {
			server := cm.DeepCopy()
			server.Annotations = map[string]string{annotationCachedDigests: forged}
			if !withData {
				server.Data = nil
			}
			if forged == copied {
				server.ResourceVersion = "816"
			}
			if _, ok := cachedDigests(server); ok {
				t.Errorf("a ConfigMap read live with record %q (data: %v) counts as a cached copy", forged, withData)
			}
			if configMapHolds(server, translate.AuthenticationConfigKey, want) != withData {
				t.Errorf("record %q (data: %v) decides what the ConfigMap holds", forged, withData)
			}
			if got := cached(t, server); configMapHolds(got, translate.AuthenticationConfigKey, want) != withData ||
				(withData && configMapHolds(got, translate.AuthenticationConfigKey, "x")) {
				t.Errorf("record %q (data: %v) on the server survives the transform: %v", forged, withData, got.Annotations)
			}
		}
	}
}

// TestCacheTransformIdempotent: client-go may pass an object of the cache through the transform again; that
// changes nothing (a trimmed shoot stays trimmed and marked, a full one full, a digest stays a digest).
func TestCacheTransformIdempotent(t *testing.T) {
	a := goldenApplies(t)["aws-registry-cache"]
	for _, applied := range []bool{true, false} {
		once := cached(t, serverShoot(t, a, applied, false))
		if twice := cached(t, once); !reflect.DeepEqual(once, twice) {
			t.Errorf("applied=%v: a second pass changed the shoot:\n once:  %+v\n twice: %+v", applied, once, twice)
		}
	}
	once := cached(t, authConfigMap(t, a, serverShoot(t, a, true, false), false))
	if twice := cached(t, once); !reflect.DeepEqual(once, twice) {
		t.Errorf("a second pass changed the ConfigMap:\n once:  %+v\n twice: %+v", once, twice)
	}
	binary := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b", ResourceVersion: "1"}, BinaryData: map[string][]byte{"k": {1}},
		Data: map[string]string{"t": "v"}}
	if got := cached(t, binary); !reflect.DeepEqual(got, binary) {
		t.Errorf("a ConfigMap with binary data is not kept whole: %+v", got)
	}
}

// TestCacheTrimmingSizes: what a cached shoot and an authentication ConfigMap cost, full and trimmed (the numbers
// of docs/operations/scale.md: go test -run TestCacheTrimmingSizes -v).
func TestCacheTrimmingSizes(t *testing.T) {
	var server, full, trimmed, cmFull, cmTrimmed, n, ncm int
	for name, a := range goldenApplies(t) {
		s := serverShoot(t, a, true, false)
		f, tr := cached(t, s), cached(t, serverShoot(t, a, false, false))
		if tr.Size()*2 > f.Size() {
			t.Errorf("%s: trimmed shoot %d bytes, full %d: not half", name, tr.Size(), f.Size())
		}
		t.Logf("%-28s shoot: server %6d, cached full %6d, cached trimmed %5d bytes", name, s.Size(), f.Size(), tr.Size())
		server, full, trimmed, n = server+s.Size(), full+f.Size(), trimmed+tr.Size(), n+1
		if a.Spec.Authentication != nil {
			cm := authConfigMap(t, a, s, false)
			c := cached(t, cm)
			if c.Size() >= cm.Size() {
				t.Errorf("%s: cached ConfigMap %d bytes, full %d", name, c.Size(), cm.Size())
			}
			t.Logf("%-28s auth ConfigMap: full %5d, cached %4d bytes", name, cm.Size(), c.Size())
			cmFull, cmTrimmed, ncm = cmFull+cm.Size(), cmTrimmed+c.Size(), ncm+1
		}
	}
	t.Logf("mean of %d shoots: server %d, cached full %d, cached trimmed %d bytes (protobuf Size())", n, server/n, full/n, trimmed/n)
	if ncm > 0 {
		t.Logf("mean of %d auth ConfigMaps: full %d, cached %d bytes", ncm, cmFull/ncm, cmTrimmed/ncm)
	}
}
