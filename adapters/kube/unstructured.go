package kube

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func fromUnstructured(m map[string]any, into any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(m, into)
}

func toUnstructured(obj any) (map[string]any, error) {
	return runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
}

// rawMergePatch is a JSON merge patch of the given document. With metadata.resourceVersion in it, the API server
// applies it only to that version (409 Conflict otherwise): optimistic locking in one request.
func rawMergePatch(doc map[string]any) (client.Patch, error) {
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("encode patch: %w", err)
	}
	return client.RawPatch(types.MergePatchType, raw), nil
}
