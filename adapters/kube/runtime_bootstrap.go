package kube

import (
	"context"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

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

// configureBootstrap applies the landscape's manifests into kyma-system (the pull secret first) and reports whether
// their Deployments are available. A set that cannot be used, or an object the runtime refuses as invalid, is
// reported as BootstrapManifestsInvalid and holds nothing up.
func configureBootstrap(ctx context.Context, c *runtimeClient, b *runtimeconfig.Bootstrap) runtimeconfig.Outcome {
	switch {
	case b == nil:
		return runtimeconfig.Outcome{}
	case b.Problem != "":
		return runtimeconfig.Failed(runtimeconfig.ReasonBootstrapManifestsInvalid, fmt.Sprintf("Bootstrap manifests %s: %s", b.Source, b.Problem))
	}
	if s := b.PullSecret; s != nil {
		ac := corev1ac.Secret(s.Name, runtimeconfig.Namespace).WithType(corev1.SecretType(s.Type)).WithData(s.Data).
			WithLabels(map[string]string{runtimeconfig.LabelManagedBy: runtimeconfig.ManagedByValue})
		if _, err := c.core.CoreV1().Secrets(runtimeconfig.Namespace).Apply(ctx, ac, applyOptions()); err != nil {
			return bootstrapOutcome(err, "apply pull secret "+s.Name)
		}
	}
	for _, o := range b.Objects {
		if err := applyObject(ctx, c, o); err != nil {
			return bootstrapOutcome(err, fmt.Sprintf("apply %s %s", o.Kind, o.Name))
		}
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

func bootstrapOutcome(err error, what string) runtimeconfig.Outcome {
	o := outcome(err, runtimeconfig.ReasonBootstrapFailed, what)
	if o.Permanent || meta.IsNoMatchError(err) {
		// The runtime refuses the manifest as it is: only a change of the manifests helps, and nothing waits for it.
		o.Reason, o.Permanent = runtimeconfig.ReasonBootstrapManifestsInvalid, false
	}
	return o
}

// applyObject applies one manifest; namespaced objects go to kyma-system whatever their metadata says.
func applyObject(ctx context.Context, c *runtimeClient, o runtimeconfig.BootstrapObject) error {
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(o.JSON, &u.Object); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	gvk := u.GroupVersionKind()
	mapper, err := c.restMapper()
	if err != nil {
		return err
	}
	mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		mapper.Reset() // a CRD may have been installed since the mapper was filled
		mapping, err = mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return err
	}
	api := c.dynamic.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		u.SetNamespace(runtimeconfig.Namespace)
		_, err = api.Namespace(runtimeconfig.Namespace).Apply(ctx, u.GetName(), u, applyOptions())
		return err
	}
	_, err = api.Apply(ctx, u.GetName(), u, applyOptions())
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
