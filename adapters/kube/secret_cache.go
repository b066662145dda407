package kube

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
)

// annotationCachedKeys is set by SecretCacheTransform on the cached copy of a Secret only (never written):
// "<resourceVersion>:<keys>", the data keys that held non-empty values in that version, comma-separated. The
// version makes the record unforgeable: a value written to the server changes the Secret's version, so it can
// never name the version it is stored in.
const annotationCachedKeys = "infrastructuremanager.kyma-project.io/cached-nonempty-keys"

// SecretCacheTransform is the cache transform of the operator's Secrets (controller-runtime's ByObject
// Transform): it drops managedFields and the data, and records which data keys were non-empty. A kubeconfig
// Secret is tens of KiB; at fleet size the data would dominate the operator's memory, and no decision taken on the
// cache needs more than "is there a kubeconfig" (the rotation policy, KubeconfigReady).
//
// A cached Secret therefore has no data: whoever needs the kubeconfig itself reads the Secret live (the runtime
// configurator does), so the operator never hands out an empty kubeconfig read from its cache. A cached Secret is
// never written back (Secrets are written by server-side apply, merge patches of labels, creates and deletes built
// from scratch): an update of it would wipe the data. A value of the annotation on the server names another
// version than the Secret's and is overwritten here, so it cannot lie about the data. The transform is idempotent
// (client-go may apply it to an object already in the cache).
func SecretCacheTransform(in any) (any, error) {
	if obj, err := meta.Accessor(in); err == nil && obj.GetManagedFields() != nil {
		obj.SetManagedFields(nil)
	}
	sec, ok := in.(*corev1.Secret)
	if !ok {
		return in, nil
	}
	if _, ok := cachedKeys(sec); ok {
		// Already transformed: client-go may pass an object of the cache through the transform again (Replace
		// after a relist), which must not turn "had a kubeconfig" into "has no data".
		return sec, nil
	}
	keys := make([]string, 0, len(sec.Data))
	for k, v := range sec.Data {
		if len(v) > 0 {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	if sec.Annotations == nil {
		sec.Annotations = map[string]string{}
	}
	sec.Annotations[annotationCachedKeys] = sec.ResourceVersion + ":" + strings.Join(keys, ",")
	sec.Data, sec.StringData = nil, nil
	return sec, nil
}

// cachedKeys returns the keys SecretCacheTransform recorded for this very version of sec; ok is false when sec
// carries no such record (read live, or a value written to the server, which names another version).
func cachedKeys(sec *corev1.Secret) ([]string, bool) {
	v, found := sec.Annotations[annotationCachedKeys]
	version, keys, _ := strings.Cut(v, ":")
	if !found || sec.Data != nil || version != sec.ResourceVersion {
		return nil, false
	}
	if keys == "" {
		return nil, true
	}
	return strings.Split(keys, ","), true
}

// hasData tells whether key of sec holds non-empty data; cached tells that sec was read from a cache, whose
// copies SecretCacheTransform stripped of their data (only then is its record believed).
func hasData(sec *corev1.Secret, key string, cached bool) bool {
	if keys, ok := cachedKeys(sec); cached && ok {
		return slices.Contains(keys, key)
	}
	return len(sec.Data[key]) > 0
}

// withoutCacheRecord returns the annotations of a cached Secret without the transform's record (what is on the
// server).
func withoutCacheRecord(annotations map[string]string) map[string]string {
	if _, ok := annotations[annotationCachedKeys]; !ok {
		return annotations
	}
	out := make(map[string]string, len(annotations)-1)
	for k, v := range annotations {
		if k != annotationCachedKeys {
			out[k] = v
		}
	}
	return out
}
