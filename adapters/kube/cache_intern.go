package kube

import (
	"unique"

	"k8s.io/apimachinery/pkg/api/meta"
	toolscache "k8s.io/client-go/tools/cache"
)

// internMaxValue: label values up to this length are interned. Short values are the repeated ones (region, plan
// name, provider, managed-by, "true"); long ones are mostly IDs that occur once, where an interned copy would only
// add the intern table's entry.
const internMaxValue = 24

// Interned wraps a cache transform so that each object then has its metadata's repeated strings shared with the
// other cached objects: namespace, label and annotation keys, short label values, finalizers, owner references'
// API version and kind. A JSON or protobuf decode allocates every string anew, so 15,000 KCP objects with KEB's ten
// to fifteen labels each hold the same keys 15,000 times. The strings keep their values; only their storage is
// shared (unique.Make: entries are dropped when no object refers to them any more). A nil next is no transform.
func Interned(next toolscache.TransformFunc) toolscache.TransformFunc {
	return func(in any) (any, error) {
		out := in
		if next != nil {
			var err error
			if out, err = next(in); err != nil {
				return out, err
			}
		}
		internMetadata(out)
		return out, nil
	}
}

func intern(s string) string {
	if s == "" {
		return s
	}
	return unique.Make(s).Value()
}

func internMetadata(obj any) {
	o, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	o.SetNamespace(intern(o.GetNamespace()))
	if l := o.GetLabels(); len(l) > 0 {
		shared := make(map[string]string, len(l))
		for k, v := range l {
			if len(v) <= internMaxValue {
				v = intern(v)
			}
			shared[intern(k)] = v
		}
		o.SetLabels(shared)
	}
	if a := o.GetAnnotations(); len(a) > 0 {
		shared := make(map[string]string, len(a))
		for k, v := range a {
			shared[intern(k)] = v
		}
		o.SetAnnotations(shared)
	}
	if f := o.GetFinalizers(); len(f) > 0 {
		for i := range f {
			f[i] = intern(f[i])
		}
	}
	if refs := o.GetOwnerReferences(); len(refs) > 0 {
		for i := range refs {
			refs[i].APIVersion, refs[i].Kind = intern(refs[i].APIVersion), intern(refs[i].Kind)
		}
	}
}
