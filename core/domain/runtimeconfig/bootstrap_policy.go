package runtimeconfig

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// The bootstrap manifests are applied with the operator's cluster-admin into every runtime, so what they may contain
// is decided here, not by the runtime's API server (which would allow anything). Names of the bootstrap's marks:
const (
	// LabelBootstrapPullSecret is the opt-in a KCP Secret must carry (value "true") to be copied into runtimes as the
	// bootstrap pull secret: the configuration naming a Secret is not enough, so a mistyped or hostile name cannot
	// copy another Secret of KCP (a runtime's kubeconfig, the operator's Gardener credential) into every runtime.
	LabelBootstrapPullSecret = "infrastructuremanager.kyma-project.io/bootstrap-pull-secret"
	// PullSecretType is the only type of Secret copied as the pull secret.
	PullSecretType = "kubernetes.io/dockerconfigjson"
	// LabelBootstrap marks (value "true") every object the operator applied from the bootstrap manifests inside a
	// runtime, the pull secret included; only objects with it are ever pruned.
	LabelBootstrap = "infrastructuremanager.kyma-project.io/bootstrap"
	// BootstrapInventoryName is the ConfigMap in Namespace that lists what the operator applied from the bootstrap
	// manifests (key BootstrapInventoryKey), so that what is removed from the manifests can be pruned.
	BootstrapInventoryName = "kim-bootstrap-inventory"
	BootstrapInventoryKey  = "objects"
	// GroupRBAC is the API group of roles and bindings: never applied unless listed, even namespaced in Namespace
	// (a RoleBinding there can hand kyma-system's Secrets to any subject).
	GroupRBAC = "rbac.authorization.k8s.io"
)

// Reasons of refused bootstrap sets (condition Bootstrapped). Like BootstrapManifestsInvalid they hold nothing up, and
// nothing of the set is applied.
const (
	// ReasonBootstrapPullSecretRefused: the configured pull secret is not a kubernetes.io/dockerconfigjson Secret
	// carrying LabelBootstrapPullSecret.
	ReasonBootstrapPullSecretRefused Reason = "BootstrapPullSecretRefused"
	// ReasonBootstrapObjectRefused: a manifest is of a kind, or for a namespace, the landscape did not allow.
	ReasonBootstrapObjectRefused Reason = "BootstrapObjectRefused"
)

// CheckPullSecret returns why the KCP Secret name (of type typ, with labels) must not be copied into runtimes as
// the bootstrap pull secret; "" when it may.
func CheckPullSecret(name, typ string, labels map[string]string) string {
	switch {
	case typ != PullSecretType:
		return fmt.Sprintf("pull secret %s is of type %q, not %s: refused", name, typ, PullSecretType)
	case labels[LabelBootstrapPullSecret] != "true":
		return fmt.Sprintf("pull secret %s does not carry the label %s=true that opts it in: refused", name, LabelBootstrapPullSecret)
	}
	return ""
}

// BootstrapKind is one entry of the landscape's list of what the bootstrap manifests may hold besides namespaced
// objects in Namespace (operator configuration runtime.bootstrap.allowedKinds): a cluster-scoped kind (Namespace
// empty), or a namespaced kind in another namespace, or an RBAC kind in Namespace. Exact names, no wildcards.
type BootstrapKind struct {
	Group     string `json:"group"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
}

// BootstrapTarget is a manifest as the runtime serves its kind.
type BootstrapTarget struct {
	Group, Kind, Name string
	// Namespace is the manifest's metadata.namespace ("" for none).
	Namespace string
	// Namespaced is the scope of the kind in the runtime (its REST mapping, or the CustomResourceDefinition in the
	// same set that defines it).
	Namespaced bool
}

// String names the object for messages: Kind group/namespace/name.
func (t BootstrapTarget) String() string {
	group := t.Group
	if group == "" {
		group = "core"
	}
	if t.Namespaced {
		return fmt.Sprintf("%s %s/%s/%s", t.Kind, group, t.Namespace, t.Name)
	}
	return fmt.Sprintf("%s %s/%s", t.Kind, group, t.Name)
}

// JudgeBootstrapObject decides whether t may be applied, given the landscape's allowed list, and where: it returns
// the namespace to apply into ("" for a cluster-scoped kind), or a refusal naming the object. Namespaced objects
// without a namespace go into Namespace. Allowed without a list: namespaced kinds in Namespace, except RBAC.
// Everything else (cluster-scoped kinds, other namespaces, RBAC) only when its group, kind and namespace are listed.
func JudgeBootstrapObject(t BootstrapTarget, allowed []BootstrapKind) (namespace, refusal string) {
	want := BootstrapKind{Group: t.Group, Kind: t.Kind}
	if t.Namespaced {
		want.Namespace = t.Namespace
		if want.Namespace == "" {
			want.Namespace = Namespace
		}
		t.Namespace = want.Namespace
		if want.Namespace == Namespace && t.Group != GroupRBAC {
			return want.Namespace, ""
		}
	}
	if slices.Contains(allowed, want) {
		return want.Namespace, ""
	}
	what := "a cluster-scoped kind"
	switch {
	case t.Namespaced && t.Group == GroupRBAC:
		what = "an RBAC kind"
	case t.Namespaced:
		what = "outside " + Namespace
	}
	return "", fmt.Sprintf("%s is %s and not in runtime.bootstrap.allowedKinds (group %q, kind %q, namespace %q): refused, nothing of the set is applied",
		t, what, want.Group, want.Kind, want.Namespace)
}

// AppliedObject identifies an object the operator applied from the bootstrap manifests inside a runtime (the
// inventory's entry). Group, not version: the same object may be served under several versions.
type AppliedObject struct {
	Group     string `json:"group"`
	Version   string `json:"version"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

func (a AppliedObject) key() string {
	return strings.Join([]string{a.Group, a.Kind, a.Namespace, a.Name}, "/")
}

// String names the object for messages.
func (a AppliedObject) String() string {
	return BootstrapTarget{Group: a.Group, Kind: a.Kind, Name: a.Name, Namespace: a.Namespace, Namespaced: a.Namespace != ""}.String()
}

// Inventory is the list of what the operator applied from the bootstrap manifests, sorted and without duplicates.
type Inventory []AppliedObject

// NewInventory returns objs sorted, without duplicates (by group, kind, namespace and name; the first version wins).
func NewInventory(objs ...AppliedObject) Inventory {
	out := Inventory{}
	seen := map[string]bool{}
	for _, o := range objs {
		if k := o.key(); !seen[k] {
			seen[k] = true
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(a, b AppliedObject) int { return strings.Compare(a.key(), b.key()) })
	return out
}

// Union is what either inventory holds (written before applying, so an object is listed before it exists and a
// failure between applying and recording never loses track of it).
func (inv Inventory) Union(other Inventory) Inventory {
	return NewInventory(append(slices.Clone(inv), other...)...)
}

// Encode is the inventory as stored in the ConfigMap.
func (inv Inventory) Encode() string {
	raw, err := json.Marshal(NewInventory(inv...))
	if err != nil {
		return "[]"
	}
	return string(raw)
}

// DecodeInventory reads a stored inventory; "" is an empty one.
func DecodeInventory(s string) (Inventory, error) {
	if strings.TrimSpace(s) == "" {
		return Inventory{}, nil
	}
	var objs []AppliedObject
	if err := json.Unmarshal([]byte(s), &objs); err != nil {
		return nil, fmt.Errorf("bootstrap inventory: %w", err)
	}
	return NewInventory(objs...), nil
}

// PlanBootstrapPrune returns the objects of the previous inventory that the current set no longer holds: candidates
// for deletion. The adapter deletes a candidate only when it still carries LabelBootstrap (PrunableBootstrapObject)
// and the landscape would still allow applying it (JudgeBootstrapObject), so an object the operator did not create,
// or a kind the landscape no longer trusts it with, is never deleted.
func PlanBootstrapPrune(previous, current Inventory) []AppliedObject {
	keep := map[string]bool{}
	for _, c := range current {
		keep[c.key()] = true
	}
	var out []AppliedObject
	for _, p := range NewInventory(previous...) {
		if !keep[p.key()] {
			out = append(out, p)
		}
	}
	return out
}

// PrunableBootstrapObject reports whether an object found in a runtime, with labels, is one the operator applied
// from the bootstrap manifests (and so may be deleted when the manifests no longer hold it).
func PrunableBootstrapObject(labels map[string]string) bool {
	return labels[LabelBootstrap] == "true"
}
