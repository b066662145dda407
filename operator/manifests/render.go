// Package manifests renders the kustomizations under config/ in-process and holds the tests of what the project
// ships there: config/default applied onto a real API server as `kubectl apply -k` does, the KCP audit policy on a
// real kube-apiserver, and the Prometheus rules against the metrics the code registers.
package manifests

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// Render builds the kustomization in dir in-process (the same engine as `kubectl kustomize`, pinned in go.mod so the
// output does not depend on the kubectl installed on a machine) and returns the objects in kustomize's order.
func Render(dir string) ([]*unstructured.Unstructured, error) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	resMap, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	objs := make([]*unstructured.Unstructured, 0, resMap.Size())
	for _, res := range resMap.Resources() {
		// Through JSON, so numbers become the int64/float64 that unstructured objects require.
		data, err := res.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("kustomize build %s: object %s: %w", dir, res.CurId(), err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return nil, fmt.Errorf("kustomize build %s: object %s: %w", dir, res.CurId(), err)
		}
		objs = append(objs, u)
	}
	return objs, nil
}
