package runtimeconfig

import (
	"encoding/json"
	"strings"
)

// Bootstrap is the landscape's optional set of manifests applied into Namespace of every runtime (off unless the
// operator configuration names them), as loaded from KCP.
type Bootstrap struct {
	// Source names where the manifests come from (namespace/name of the KCP ConfigMap), for messages.
	Source string
	// Objects are the manifests, one object each as JSON, in the order they are applied. Namespaced objects without
	// a namespace are placed in Namespace; what may be applied at all is JudgeBootstrapObject's decision.
	Objects []BootstrapObject
	// Allowed is the landscape's list of cluster-scoped kinds, other namespaces and RBAC kinds the objects may
	// hold (runtime.bootstrap.allowedKinds).
	Allowed []BootstrapKind
	// PullSecret is copied into Namespace before the objects (nil: none).
	PullSecret *PullSecret
	// Problem says why the manifests cannot be used (not YAML, an object without kind or name, a missing pull
	// secret, a refused pull secret): nothing is applied and the runtime reports ProblemReason, but nothing else
	// waits for it.
	Problem string
	// ProblemReason is the stable reason of Problem; empty: BootstrapManifestsInvalid.
	ProblemReason Reason
}

// ProblemOutcome is the outcome of a set with a Problem: nothing applied, nothing waits.
func (b *Bootstrap) ProblemOutcome() Outcome {
	reason := b.ProblemReason
	if reason == "" {
		reason = ReasonBootstrapManifestsInvalid
	}
	return Failed(reason, "Bootstrap manifests "+b.Source+": "+b.Problem)
}

// RefusedReason reports whether reason says the landscape's set cannot be used as it is (invalid or refused): such
// an outcome holds nothing up, because only a change of the manifests or the configuration helps.
func RefusedReason(reason Reason) bool {
	switch reason {
	case ReasonBootstrapManifestsInvalid, ReasonBootstrapPullSecretRefused, ReasonBootstrapObjectRefused:
		return true
	}
	return false
}

// HoldsNothingUp reports whether a bootstrap outcome of that reason leaves the runtime's configuration complete: a
// set that cannot be used (RefusedReason), or one the runtime waits for in the rollout (it keeps what it has).
func HoldsNothingUp(reason Reason) bool {
	return RefusedReason(reason) || reason == ReasonBootstrapWaitingForWave
}

// DefinedKinds are the kinds the set's own CustomResourceDefinitions define, by group and kind, with whether they
// are namespaced: a custom resource applied after its CRD in the same set is judged by the scope the CRD declares
// (the runtime cannot map it before the CRD is applied).
func (b *Bootstrap) DefinedKinds() map[[2]string]bool {
	out := map[[2]string]bool{}
	for _, o := range b.Objects {
		if o.Kind != "CustomResourceDefinition" || o.Group() != "apiextensions.k8s.io" {
			continue
		}
		var crd struct {
			Spec struct {
				Group string `json:"group"`
				Scope string `json:"scope"`
				Names struct {
					Kind string `json:"kind"`
				} `json:"names"`
			} `json:"spec"`
		}
		if json.Unmarshal(o.JSON, &crd) != nil || crd.Spec.Group == "" || crd.Spec.Names.Kind == "" {
			continue
		}
		out[[2]string{crd.Spec.Group, crd.Spec.Names.Kind}] = crd.Spec.Scope != "Cluster"
	}
	return out
}

// BootstrapObject is one manifest.
type BootstrapObject struct {
	APIVersion string
	Kind       string
	Name       string
	// Namespace is the manifest's metadata.namespace ("" for none).
	Namespace string
	// JSON is the whole object.
	JSON []byte
}

// Group is the API group of the object's apiVersion ("" for the core group).
func (o BootstrapObject) Group() string {
	if g, _, ok := strings.Cut(o.APIVersion, "/"); ok {
		return g
	}
	return ""
}

// Version is the version of the object's apiVersion.
func (o BootstrapObject) Version() string {
	if _, v, ok := strings.Cut(o.APIVersion, "/"); ok {
		return v
	}
	return o.APIVersion
}

// PullSecret is an image pull secret of the landscape (kubernetes.io/dockerconfigjson).
type PullSecret struct {
	Name string
	Type string
	Data map[string][]byte
}

// Deployments are the names of the Deployments among the objects: the bootstrap is done when all are available.
func (b *Bootstrap) Deployments() []string {
	if b == nil {
		return nil
	}
	var out []string
	for _, o := range b.Objects {
		if o.Kind == "Deployment" && o.APIVersion == "apps/v1" && (o.Namespace == "" || o.Namespace == Namespace) {
			out = append(out, o.Name)
		}
	}
	return out
}
