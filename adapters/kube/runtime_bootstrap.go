package kube

import (
	"context"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/dynamic"

	"github.com/kyma-project/kim/core/domain/runtimeconfig"
)

// bootstrapSkipped is the bootstrap outcome when it could not be attempted: zero when none is configured.
func bootstrapSkipped(d runtimeconfig.Desired, why runtimeconfig.Outcome) runtimeconfig.Outcome {
	if d.Bootstrap == nil {
		return runtimeconfig.Outcome{}
	}
	why.Skipped = true
	return why
}

// configureBootstrap applies the landscape's manifests (the pull secret first) and reports whether their
// Deployments are available. Every object is judged first (runtimeconfig.JudgeBootstrapObject): one refused object,
// a set that cannot be used, or a kind the runtime does not serve refuses the whole set before anything is written,
// and holds nothing up. Then the inventory in kyma-system is widened to what is about to be applied, the set is
// applied, what the previous inventory held and the set no longer does is pruned (only objects carrying the
// bootstrap label), and the inventory is narrowed to the set.
func configureBootstrap(ctx context.Context, c *runtimeClient, b *runtimeconfig.Bootstrap) runtimeconfig.Outcome {
	switch {
	case b == nil:
		return runtimeconfig.Outcome{}
	case b.Problem != "":
		return b.ProblemOutcome()
	}
	mapper, err := c.restMapper()
	if err != nil {
		return bootstrapOutcome(err, "discover the runtime's kinds")
	}
	objs, refused, err := judgeBootstrap(mapper, b)
	if err != nil {
		return bootstrapOutcome(err, "map the bootstrap manifests")
	}
	if refused != nil {
		return *refused
	}
	current := make([]runtimeconfig.AppliedObject, 0, len(objs)+1)
	if s := b.PullSecret; s != nil {
		current = append(current, runtimeconfig.AppliedObject{Version: "v1", Kind: "Secret", Namespace: runtimeconfig.Namespace, Name: s.Name})
	}
	for _, o := range objs {
		current = append(current, o.applied)
	}
	inv := runtimeconfig.NewInventory(current...)
	previous, err := readInventory(ctx, c)
	if err != nil {
		return bootstrapOutcome(err, "read the bootstrap inventory")
	}
	if err := writeInventory(ctx, c, previous.Union(inv), previous); err != nil {
		return bootstrapOutcome(err, "write the bootstrap inventory")
	}
	if s := b.PullSecret; s != nil {
		ac := corev1ac.Secret(s.Name, runtimeconfig.Namespace).WithType(corev1.SecretType(s.Type)).WithData(s.Data).
			WithLabels(map[string]string{runtimeconfig.LabelManagedBy: runtimeconfig.ManagedByValue, runtimeconfig.LabelBootstrap: "true"})
		if _, err := c.core.CoreV1().Secrets(runtimeconfig.Namespace).Apply(ctx, ac, applyOptions()); err != nil {
			return bootstrapOutcome(err, "apply pull secret "+s.Name)
		}
	}
	for _, o := range objs {
		if err := applyObject(ctx, c, mapper, o); err != nil {
			return bootstrapOutcome(err, "apply "+o.applied.String())
		}
	}
	if err := pruneBootstrap(ctx, c, mapper, b, runtimeconfig.PlanBootstrapPrune(previous, inv)); err != nil {
		return bootstrapOutcome(err, "prune the bootstrap manifests")
	}
	if err := writeInventory(ctx, c, inv, previous.Union(inv)); err != nil {
		return bootstrapOutcome(err, "write the bootstrap inventory")
	}
	var waiting []string
	for _, name := range b.Deployments() {
		dep, err := c.core.AppsV1().Deployments(runtimeconfig.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return bootstrapOutcome(err, "read Deployment "+name)
		}
		if !deploymentAvailable(dep) {
			waiting = append(waiting, name)
		}
	}
	if len(waiting) > 0 {
		return runtimeconfig.Failed(runtimeconfig.ReasonBootstrapInProgress,
			fmt.Sprintf("The bootstrap manifests are applied; waiting for Deployments %v in kyma-system to be available.", waiting))
	}
	return runtimeconfig.Done(runtimeconfig.ReasonBootstrapCompleted, "The bootstrap manifests are applied and their Deployments are available.")
}

// judgedObject is a manifest the policy allowed, with where it goes.
type judgedObject struct {
	obj     runtimeconfig.BootstrapObject
	applied runtimeconfig.AppliedObject
}

// judgeBootstrap maps every object to the runtime's kinds (a kind the set's own CRD defines by the CRD's scope) and
// judges it. It returns the refusal of the first object that may not be applied, or of one whose kind the runtime
// does not serve (BootstrapManifestsInvalid), so that nothing is applied of a set that cannot be applied whole.
func judgeBootstrap(mapper meta.ResettableRESTMapper, b *runtimeconfig.Bootstrap) ([]judgedObject, *runtimeconfig.Outcome, error) {
	defined := b.DefinedKinds()
	out := make([]judgedObject, 0, len(b.Objects))
	for _, o := range b.Objects {
		t := runtimeconfig.BootstrapTarget{Group: o.Group(), Kind: o.Kind, Name: o.Name, Namespace: o.Namespace}
		scope, err := kindScope(mapper, o)
		if meta.IsNoMatchError(err) {
			namespaced, ok := defined[[2]string{t.Group, t.Kind}]
			if !ok {
				refused := runtimeconfig.Failed(runtimeconfig.ReasonBootstrapManifestsInvalid,
					fmt.Sprintf("Bootstrap manifests %s: the runtime does not serve %s (%v): nothing of the set is applied", b.Source, t, err))
				return nil, &refused, nil
			}
			scope, err = namespaced, nil
		}
		if err != nil {
			return nil, nil, err
		}
		t.Namespaced = scope
		ns, why := runtimeconfig.JudgeBootstrapObject(t, b.Allowed)
		if why != "" {
			refused := runtimeconfig.Failed(runtimeconfig.ReasonBootstrapObjectRefused, fmt.Sprintf("Bootstrap manifests %s: %s", b.Source, why))
			return nil, &refused, nil
		}
		out = append(out, judgedObject{obj: o, applied: runtimeconfig.AppliedObject{Group: t.Group, Version: o.Version(), Kind: o.Kind,
			Namespace: ns, Name: o.Name}})
	}
	return out, nil, nil
}

// kindScope reports whether the object's kind is namespaced in the runtime (a NoMatch error when it does not serve it,
// after the mapper was refilled once: a CRD may have been installed since).
func kindScope(mapper meta.ResettableRESTMapper, o runtimeconfig.BootstrapObject) (bool, error) {
	gk := schema.GroupKind{Group: o.Group(), Kind: o.Kind}
	mapping, err := mapper.RESTMapping(gk, o.Version())
	if meta.IsNoMatchError(err) {
		mapper.Reset()
		mapping, err = mapper.RESTMapping(gk, o.Version())
	}
	if err != nil {
		return false, err
	}
	return mapping.Scope.Name() == meta.RESTScopeNameNamespace, nil
}

func bootstrapOutcome(err error, what string) runtimeconfig.Outcome {
	o := outcome(err, runtimeconfig.ReasonBootstrapFailed, what)
	if o.Permanent || meta.IsNoMatchError(err) {
		// The runtime refuses the manifest as it is: only a change of the manifests helps, and nothing waits for it.
		o.Reason, o.Permanent = runtimeconfig.ReasonBootstrapManifestsInvalid, false
	}
	return o
}

// applyObject applies one judged manifest into the namespace the policy chose, with the bootstrap label that makes
// it prunable.
func applyObject(ctx context.Context, c *runtimeClient, mapper meta.ResettableRESTMapper, o judgedObject) error {
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(o.obj.JSON, &u.Object); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	labels := u.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[runtimeconfig.LabelBootstrap] = "true"
	u.SetLabels(labels)
	api, err := resourceFor(c, mapper, o.applied)
	if err != nil {
		return err
	}
	u.SetNamespace(o.applied.Namespace)
	_, err = api.Apply(ctx, u.GetName(), u, applyOptions())
	return err
}

// resourceFor is the dynamic client of the object's resource (in its namespace when it has one).
func resourceFor(c *runtimeClient, mapper meta.ResettableRESTMapper, a runtimeconfig.AppliedObject) (dynamic.ResourceInterface, error) {
	gk := schema.GroupKind{Group: a.Group, Kind: a.Kind}
	mapping, err := mapper.RESTMapping(gk, a.Version)
	if meta.IsNoMatchError(err) {
		mapper.Reset() // a CRD of the set was applied since the mapper was filled
		mapping, err = mapper.RESTMapping(gk, a.Version)
	}
	if err != nil {
		return nil, err
	}
	if a.Namespace != "" {
		return c.dynamic.Resource(mapping.Resource).Namespace(a.Namespace), nil
	}
	return c.dynamic.Resource(mapping.Resource), nil
}

// pruneBootstrap deletes the candidates that still carry the bootstrap label and that the landscape would still let
// the operator apply; a candidate whose kind is no longer served, that is gone, or that someone else owns (no
// label) is left alone. The delete is conditional on the UID that was read, so an object re-created meanwhile by
// someone else is not deleted.
func pruneBootstrap(ctx context.Context, c *runtimeClient, mapper meta.ResettableRESTMapper, b *runtimeconfig.Bootstrap,
	candidates []runtimeconfig.AppliedObject) error {
	for _, a := range candidates {
		t := runtimeconfig.BootstrapTarget{Group: a.Group, Kind: a.Kind, Name: a.Name, Namespace: a.Namespace, Namespaced: a.Namespace != ""}
		if ns, why := runtimeconfig.JudgeBootstrapObject(t, b.Allowed); why != "" || ns != a.Namespace {
			continue // not a kind the landscape trusts the operator with (any more): never deleted either
		}
		api, err := resourceFor(c, mapper, a)
		if meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return err
		}
		live, err := api.Get(ctx, a.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", a, err)
		}
		if !runtimeconfig.PrunableBootstrapObject(live.GetLabels()) {
			continue
		}
		uid := live.GetUID()
		err = api.Delete(ctx, a.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("delete %s: %w", a, err)
		}
	}
	return nil
}

// readInventory reads what the operator applied from the bootstrap manifests before. A corrupt inventory (someone
// edited it) is read as empty: nothing is pruned, which leaves objects behind rather than deleting any wrongly.
func readInventory(ctx context.Context, c *runtimeClient) (runtimeconfig.Inventory, error) {
	cm, err := c.core.CoreV1().ConfigMaps(runtimeconfig.Namespace).Get(ctx, runtimeconfig.BootstrapInventoryName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return runtimeconfig.Inventory{}, nil
	}
	if err != nil {
		return nil, err
	}
	inv, err := runtimeconfig.DecodeInventory(cm.Data[runtimeconfig.BootstrapInventoryKey])
	if err != nil {
		return runtimeconfig.Inventory{}, nil
	}
	return inv, nil
}

// writeInventory stores inv unless the runtime holds it already (stored).
func writeInventory(ctx context.Context, c *runtimeClient, inv, stored runtimeconfig.Inventory) error {
	if inv.Encode() == stored.Encode() {
		return nil
	}
	ac := corev1ac.ConfigMap(runtimeconfig.BootstrapInventoryName, runtimeconfig.Namespace).
		WithLabels(map[string]string{runtimeconfig.LabelManagedBy: runtimeconfig.ManagedByValue}).
		WithData(map[string]string{runtimeconfig.BootstrapInventoryKey: inv.Encode()})
	_, err := c.core.CoreV1().ConfigMaps(runtimeconfig.Namespace).Apply(ctx, ac, applyOptions())
	return err
}

// deploymentAvailable reports whether the Deployment's controller has seen its latest spec and reports it available.
func deploymentAvailable(d *appsv1.Deployment) bool {
	if d.Status.ObservedGeneration < d.Generation {
		return false
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
