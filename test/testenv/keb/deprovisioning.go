package keb

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The step of KEB's deprovisioning that frees the instance's credentials binding, written from what KEB's
// Free_Credentials_Binding_Step does (docs/keb-contract.md, ../shared/design/PEERS.md §1): it reads the objects as
// unstructured, as KEB's dynamic client does, so the double depends on no Gardener type of ours.
var (
	credentialsBindingGVK = schema.GroupVersionKind{Group: "security.gardener.cloud", Version: "v1alpha1", Kind: "CredentialsBinding"}
	shootGVK              = schema.GroupVersionKind{Group: "core.gardener.cloud", Version: "v1beta1", Kind: "Shoot"}
)

// KEB's step timing: a retry every 10 s, and after an hour of the instance's shoot still existing the
// deprovisioning fails.
const (
	FreeBindingRetry       = 10 * time.Second
	FreeBindingShootWait   = time.Hour
	freeBindingStepTimeout = time.Minute // KEB's retry budget for a failing read or write
)

// FreeBindingResult is how KEB's step ended.
type FreeBindingResult struct {
	// Failed is true when the deprovisioning failed (the shoot outlived ShootWait, or a read kept failing).
	Failed bool
	// Reason says which branch ended the step.
	Reason string
	// Took is how long the step ran.
	Took time.Duration
}

// FreeCredentialsBinding is a double of KEB's Free_Credentials_Binding_Step run against the garden, in the
// project namespace, for the instance whose binding is binding and whose shoot is shootName. shootWait replaces
// KEB's hard-coded hour (tests cannot wait that long; KEB's result for a shoot outliving it is the same). It
// returns when KEB's step would: done, or failed.
//
//   - a binding labelled shared, internal or dirty = "true": done;
//   - the shoot (Get by name) exists: retry every 10 s; after shootWait failed, labelling the binding dirty only
//     if no other shoot names it (spec.credentialsBindingName);
//   - the shoot gone and another shoot names the binding: done, binding unchanged;
//   - otherwise: label dirty = "true" with a full update, done.
func FreeCredentialsBinding(ctx context.Context, garden client.Client, namespace, binding, shootName string, shootWait time.Duration) FreeBindingResult {
	start := time.Now()
	end := func(failed bool, reason string) FreeBindingResult {
		return FreeBindingResult{Failed: failed, Reason: reason, Took: time.Since(start)}
	}
	if binding == "" {
		return end(false, "no binding")
	}
	for {
		cb := &unstructured.Unstructured{}
		cb.SetGroupVersionKind(credentialsBindingGVK)
		if err := garden.Get(ctx, client.ObjectKey{Namespace: namespace, Name: binding}, cb); err != nil {
			if time.Since(start) > freeBindingStepTimeout {
				return end(true, fmt.Sprintf("get binding %s: %v", binding, err))
			}
			if !sleep(ctx, FreeBindingRetry) {
				return end(true, "cancelled")
			}
			continue
		}
		l := cb.GetLabels()
		for _, key := range []string{"shared", "internal", "dirty"} {
			if l[key] == "true" {
				return end(false, "binding labelled "+key)
			}
		}
		s := &unstructured.Unstructured{}
		s.SetGroupVersionKind(shootGVK)
		err := garden.Get(ctx, client.ObjectKey{Namespace: namespace, Name: shootName}, s)
		if err == nil {
			if time.Since(start) > shootWait {
				if others, lerr := shootsNaming(ctx, garden, namespace, binding, shootName); lerr == nil && len(others) == 0 {
					_ = markDirty(ctx, garden, cb)
				}
				return end(true, fmt.Sprintf("shoot %s still exists after %s", shootName, shootWait))
			}
			if !sleep(ctx, FreeBindingRetry) {
				return end(true, "cancelled")
			}
			continue
		}
		// KEB treats every error of the Get as the shoot being gone.
		others, err := shootsNaming(ctx, garden, namespace, binding, "")
		if err != nil {
			return end(true, fmt.Sprintf("list shoots: %v", err))
		}
		if len(others) > 0 {
			return end(false, "binding used by shoot "+others[0])
		}
		if err := markDirty(ctx, garden, cb); err != nil {
			return end(true, fmt.Sprintf("label binding %s dirty: %v", binding, err))
		}
		return end(false, "binding labelled dirty")
	}
}

func shootsNaming(ctx context.Context, garden client.Client, namespace, binding, except string) ([]string, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(shootGVK.GroupVersion().WithKind("ShootList"))
	if err := garden.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	var out []string
	for _, s := range list.Items {
		name, _, _ := unstructured.NestedString(s.Object, "spec", "credentialsBindingName")
		if name == binding && s.GetName() != except {
			out = append(out, s.GetName())
		}
	}
	return out, nil
}

// markDirty sets dirty = "true" with a full update of the object as read, as KEB does.
func markDirty(ctx context.Context, garden client.Client, cb *unstructured.Unstructured) error {
	l := cb.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	l["dirty"] = "true"
	cb.SetLabels(l)
	return garden.Update(ctx, cb)
}

func sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// Poolable tells whether KEB's provisioning could hand the binding with labels to a new tenant: its claim selects
// bindings without a dirty label, without tenantName and not shared (KEB:internal/subscriptions/label_selector.go).
func Poolable(labels map[string]string) bool {
	_, dirty := labels["dirty"]
	_, tenant := labels["tenantName"]
	return !dirty && !tenant && labels["shared"] != "true"
}
