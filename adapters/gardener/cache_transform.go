package gardener

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/kim/core/domain/shoot"
)

// Records CacheTransform sets on the cached copies it trims (never written: a cached copy is never written back).
// Each is "<resourceVersion>:<seal>:<payload>". The version binds the record to the object it was made from; the
// seal, an HMAC under a key of this process, makes it unforgeable: a value written to the server (or copied from
// another operator process) never passes as the record, even one that guessed the version its write produces.
const (
	// annotationCachedSpec marks a shoot whose spec was trimmed (payload empty).
	annotationCachedSpec = "infrastructuremanager.kyma-project.io/cached-spec-trimmed"
	// annotationCachedDigests replaces the data of a ConfigMap: payload "<key>=<sha256 hex>,..." sorted by key.
	annotationCachedDigests = "infrastructuremanager.kyma-project.io/cached-data-digests"
)

// cacheSealKey is the HMAC key of the records: random per process, so no stored value can carry a valid seal.
var cacheSealKey = func() []byte {
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		panic("no randomness for the cache record key: " + err.Error())
	}
	return k
}()

func seal(annotation, resourceVersion, payload string) string {
	m := hmac.New(sha256.New, cacheSealKey)
	m.Write([]byte(annotation + "\x00" + resourceVersion + "\x00" + payload))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

func cacheRecord(annotation, resourceVersion, payload string) string {
	return resourceVersion + ":" + seal(annotation, resourceVersion, payload) + ":" + payload
}

// readCacheRecord returns the payload of the record under annotation when it was made by this process for this
// very version of obj; ok is false for no record, a record of another version and a forged one.
func readCacheRecord(obj metav1.Object, annotation string) (payload string, ok bool) {
	v, found := obj.GetAnnotations()[annotation]
	if !found {
		return "", false
	}
	version, rest, _ := strings.Cut(v, ":")
	mac, payload, _ := strings.Cut(rest, ":")
	if version != obj.GetResourceVersion() || !hmac.Equal([]byte(mac), []byte(seal(annotation, version, payload))) {
		return "", false
	}
	return payload, true
}

// CacheTransform trims the objects of the garden cache before they are stored (controller-runtime's
// cache.Options.DefaultTransform): at fleet size the cache holds every shoot of the project, and most of a shoot's
// bytes are fields the operator never reads.
//
//   - managedFields of every object but the bare entry saying the operator applied it (appliedByOperator reads that from
//     the cache; the hand-over of a new shoot's fields to the apply manager reads the shoot live);
//   - of a shoot's status only what Observe maps (generation, hibernation, advertised addresses, last operation
//     and errors) and the small identifying fields are kept; conditions, constraints, credentials rotation,
//     maintenance, networking and migration state go;
//   - of a shoot the operator never applied (half the project at fleet size: shoots without a Runtime, and those
//     of runtimes not yet taken over) only the spec fields read on cached shoots stay (trimShootSpec), and the
//     copy is marked (annotationCachedSpec): whoever compares or writes the spec reads such a shoot live (see
//     Shoots.get). Once the operator applies the shoot, the watch delivers it with the Apply entry, whole;
//   - a ConfigMap (the operator's structured-authentication ones) keeps its metadata and, instead of its data, a
//     digest per key (annotationCachedDigests): the drift check compares digests, nothing reads the content cached.
//
// A trimmed object is never written back: every write of a shoot is a server-side apply of the desired spec, a
// patch or an update of an object read live or returned by the API server (see shoots.go). The transform is
// idempotent: client-go may pass an object of the cache through it again.
func CacheTransform(in any) (any, error) {
	s, isShoot := in.(*gardencorev1beta1.Shoot)
	// Decided before the managedFields are trimmed (the kept entry would tell the same, but not on the first pass
	// of an object whose entry is not the first).
	applied := isShoot && appliedByOperator(s)
	if obj, err := meta.Accessor(in); err == nil && obj.GetManagedFields() != nil {
		// Only the fact that the operator applied the object stays (appliedByOperator decides between a full apply and
		// marks only on it; without it a removal from the spec would never be applied), without its field set.
		var kept []metav1.ManagedFieldsEntry // nil, not empty, when none: never an empty list
		for _, m := range obj.GetManagedFields() {
			if m.Manager == FieldManager && m.Operation == metav1.ManagedFieldsOperationApply {
				m.FieldsV1 = nil
				kept = append(kept, m)
			}
		}
		obj.SetManagedFields(kept)
	}
	if isShoot {
		st := s.Status
		s.Status = gardencorev1beta1.ShootStatus{
			Gardener: st.Gardener, IsHibernated: st.IsHibernated, LastOperation: st.LastOperation, LastErrors: st.LastErrors,
			ObservedGeneration: st.ObservedGeneration, SeedName: st.SeedName, TechnicalID: st.TechnicalID, UID: st.UID,
			AdvertisedAddresses: st.AdvertisedAddresses,
		}
		if applied {
			// A marker the server holds is not this cache's: the spec is whole.
			dropAnnotation(s, annotationCachedSpec)
		} else {
			trimShootSpec(s)
		}
	}
	if cm, ok := in.(*corev1.ConfigMap); ok {
		digestConfigMap(cm)
	}
	return in, nil
}

// trimShootSpec keeps of the spec what is read on cached shoots: hibernation and seed (Observe, for the Runtime,
// kubeconfig and reaper controllers, the listers and the watch filters), the registry-cache extensions and the
// resources (the registry-cache shoot events and RegistryCacheView). Trimming a trimmed shoot changes nothing.
func trimShootSpec(s *gardencorev1beta1.Shoot) {
	sp := s.Spec
	out := gardencorev1beta1.ShootSpec{SeedName: sp.SeedName, Resources: sp.Resources}
	if h := sp.Hibernation; h != nil {
		out.Hibernation = &gardencorev1beta1.Hibernation{Enabled: h.Enabled}
	}
	for _, e := range sp.Extensions {
		if e.Type == shoot.ExtensionRegistryCache {
			out.Extensions = append(out.Extensions, e)
		}
	}
	s.Spec = out
	metav1.SetMetaDataAnnotation(&s.ObjectMeta, annotationCachedSpec, cacheRecord(annotationCachedSpec, s.ResourceVersion, ""))
}

// specTrimmed reports whether s is a copy of the garden cache whose spec CacheTransform trimmed.
func specTrimmed(s *gardencorev1beta1.Shoot) bool {
	_, ok := readCacheRecord(s, annotationCachedSpec)
	return ok
}

// digestConfigMap replaces the data of cm by a digest per key. A ConfigMap with binary data is kept whole (the
// operator writes none; nothing would read a digest of it).
func digestConfigMap(cm *corev1.ConfigMap) {
	if _, ok := cachedDigests(cm); ok {
		return // already transformed: the data is gone, the record stays
	}
	if cm.BinaryData != nil {
		dropAnnotation(cm, annotationCachedDigests)
		return
	}
	parts := make([]string, 0, len(cm.Data))
	for k, v := range cm.Data {
		parts = append(parts, k+"="+digest(v))
	}
	slices.Sort(parts)
	metav1.SetMetaDataAnnotation(&cm.ObjectMeta, annotationCachedDigests,
		cacheRecord(annotationCachedDigests, cm.ResourceVersion, strings.Join(parts, ",")))
	cm.Data = nil
}

// cachedDigests returns the digests per key digestConfigMap recorded for this very version of cm; ok is false when
// cm carries no such record (read live, or any value of the annotation on the server).
func cachedDigests(cm *corev1.ConfigMap) (map[string]string, bool) {
	payload, ok := readCacheRecord(cm, annotationCachedDigests)
	if !ok || cm.Data != nil {
		return nil, false
	}
	out := map[string]string{}
	for p := range strings.SplitSeq(payload, ",") {
		if k, d, found := strings.Cut(p, "="); found {
			out[k] = d // keys are [-._a-zA-Z0-9]+: no separator in them
		}
	}
	return out, true
}

// configMapHolds reports whether key of cm holds v (an absent key holds ""), by digest on a cached copy.
func configMapHolds(cm *corev1.ConfigMap, key, v string) bool {
	if digests, ok := cachedDigests(cm); ok {
		d, found := digests[key]
		return (found && d == digest(v)) || (!found && v == "")
	}
	return cm.Data[key] == v
}

func digest(v string) string {
	sum := sha256.Sum256([]byte(v))
	return hex.EncodeToString(sum[:])
}

func dropAnnotation(obj metav1.Object, key string) {
	a := obj.GetAnnotations()
	if _, ok := a[key]; ok {
		delete(a, key)
		obj.SetAnnotations(a)
	}
}
