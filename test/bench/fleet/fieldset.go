package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/gardener"
)

// appliedByOperator hands the fields of a copied shoot to the operator's apply manager, as the operator does with a
// shoot it creates (applied, then the create's managedFields entry removed): the garden cache keeps the spec only of
// shoots the operator applied, and a copy without the entry would be read live at every start, like a shoot adopted
// from the previous manager and never applied. The apply sends what the operator's entry owns on the template
// (owned, with the copy's names): applying more would hand the operator fields Gardener defaulted, which its next
// apply would then remove.
func appliedByOperator(ctx context.Context, c client.Client, obj *unstructured.Unstructured, owned map[string]any, res *seedResult) error {
	body, ok := pick(obj.Object, owned).(map[string]any)
	if !ok {
		return fmt.Errorf("copied shoot %s: the operator's fields are not an object", obj.GetName())
	}
	body["apiVersion"], body["kind"] = obj.GetAPIVersion(), obj.GetKind()
	meta, _ := body["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta["name"], meta["namespace"] = obj.GetName(), obj.GetNamespace()
	body["metadata"] = meta
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	if err := c.Patch(ctx, obj, client.RawPatch(types.ApplyPatchType, raw), client.FieldOwner(gardener.FieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("apply copied shoot %s as the operator: %w", obj.GetName(), err)
	}
	i := slices.IndexFunc(obj.GetManagedFields(), func(e metav1.ManagedFieldsEntry) bool {
		return e.Manager == seedManager && e.Operation == metav1.ManagedFieldsOperationUpdate
	})
	if i < 0 {
		return fmt.Errorf("copied shoot %s: no managedFields entry of %s after the apply", obj.GetName(), seedManager)
	}
	entry := fmt.Sprintf("/metadata/managedFields/%d", i)
	patch, err := json.Marshal([]map[string]any{
		{"op": "test", "path": entry + "/manager", "value": seedManager},
		{"op": "remove", "path": entry}})
	if err != nil {
		return err
	}
	if err := c.Patch(ctx, obj, client.RawPatch(types.JSONPatchType, patch)); err != nil {
		return fmt.Errorf("hand copied shoot %s to the operator's apply manager: %w", obj.GetName(), err)
	}
	atomic.AddInt64(&res.requests, 2)
	return nil
}

// operatorFields is the field set (managedFields FieldsV1) of the operator's apply entry on o; nil when it has none.
func operatorFields(o *unstructured.Unstructured) (map[string]any, error) {
	for _, e := range o.GetManagedFields() {
		if e.Manager == gardener.FieldManager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == "" && e.FieldsV1 != nil {
			set := map[string]any{}
			if err := json.Unmarshal(e.FieldsV1.GetRawBytes(), &set); err != nil {
				return nil, fmt.Errorf("managedFields of %s: %w", o.GetName(), err)
			}
			return set, nil
		}
	}
	return nil, nil
}

// pick is the part of v that the field set names: "f:<name>" members of objects, "k:<key>", "v:<value>" and
// "i:<index>" elements of lists (in v's order); a member or element whose set is empty is taken whole.
func pick(v any, set map[string]any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, sub := range set {
			name, ok := strings.CutPrefix(k, "f:")
			child, present := x[name]
			if !ok || !present {
				continue
			}
			out[name] = pickOrWhole(child, sub)
		}
		return out
	case []any:
		out := []any{}
		for i, e := range x {
			for k, sub := range set {
				if selects(k, i, e) {
					out = append(out, pickOrWhole(e, sub))
					break
				}
			}
		}
		return out
	}
	return v
}

func pickOrWhole(v, sub any) any {
	subset, _ := sub.(map[string]any)
	if len(subset) == 0 {
		return v
	}
	return pick(v, subset)
}

// selects reports whether the list member key k of a field set names element e at index i.
func selects(k string, i int, e any) bool {
	switch {
	case strings.HasPrefix(k, "i:"):
		return k == fmt.Sprintf("i:%d", i)
	case strings.HasPrefix(k, "v:"):
		return sameJSON(k[2:], e)
	case strings.HasPrefix(k, "k:"):
		key := map[string]any{}
		m, ok := e.(map[string]any)
		if !ok || json.Unmarshal([]byte(k[2:]), &key) != nil {
			return false
		}
		for name, want := range key {
			raw, err := json.Marshal(want)
			if err != nil || !sameJSON(string(raw), m[name]) {
				return false
			}
		}
		return true
	}
	return false
}

// sameJSON reports whether v encodes to the JSON text raw.
func sameJSON(raw string, v any) bool {
	got, err := json.Marshal(v)
	return err == nil && string(got) == raw
}
