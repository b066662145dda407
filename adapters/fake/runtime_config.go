package fake

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/kyma-project/kim/core/domain/runtimeconfig"
	"github.com/kyma-project/kim/core/ports"
)

// RuntimeConfigurator is an in-memory ports.RuntimeConfigurator: every runtime is a set of namespaces, ConfigMaps,
// OpenIDConnect resources, ClusterRoleBindings and bootstrap objects that Configure changes the way the real adapter
// changes a runtime's API server, and that the helpers change the way people and Gardener do.
type RuntimeConfigurator struct {
	mu       sync.Mutex
	runtimes map[string]*memRuntime
	// ServeOIDCByDefault makes new runtimes serve OpenIDConnect resources (as after shoot-oidc-service installed its
	// CRD); without it ServeOIDC must be called.
	ServeOIDCByDefault bool
	// Err, when set, is consulted first by Configure; a non-nil error is returned with every part unreachable.
	Err func(d runtimeconfig.Desired) error
	// Writes counts the objects written or deleted inside runtimes.
	Writes int
}

type memRuntime struct {
	unreachable bool
	serveOIDC   bool
	namespaces  map[string]bool
	configMaps  map[string]memConfigMap // namespace/name
	oidc        map[string]runtimeconfig.ObservedOIDC
	bindings    map[string]runtimeconfig.ObservedBinding
	objects     map[string]memObject // bootstrap objects: kind/namespace/name ("" namespace: cluster-scoped)
	inventory   runtimeconfig.Inventory
	secrets     map[string]runtimeconfig.PullSecret
	available   map[string]bool // Deployments (namespace/name) that are available
	// bootstrapFault makes applying the bootstrap manifests fail; bootstrapPasses counts the attempts to apply them.
	bootstrapFault  bool
	bootstrapPasses int
}

// memObject is a bootstrap object; labelled: it carries runtimeconfig.LabelBootstrap.
type memObject struct {
	json     []byte
	labelled bool
}

type memConfigMap struct {
	data   map[string]string
	labels map[string]string
}

// NewRuntimeConfigurator returns a configurator with no runtimes; runtimes serve OpenIDConnect resources.
func NewRuntimeConfigurator() *RuntimeConfigurator {
	return &RuntimeConfigurator{runtimes: map[string]*memRuntime{}, ServeOIDCByDefault: true}
}

var _ ports.RuntimeConfigurator = (*RuntimeConfigurator)(nil)

func (r *RuntimeConfigurator) runtime(id string) *memRuntime {
	rt, ok := r.runtimes[id]
	if !ok {
		rt = &memRuntime{serveOIDC: r.ServeOIDCByDefault, namespaces: map[string]bool{}, configMaps: map[string]memConfigMap{},
			oidc: map[string]runtimeconfig.ObservedOIDC{}, bindings: map[string]runtimeconfig.ObservedBinding{},
			objects: map[string]memObject{}, secrets: map[string]runtimeconfig.PullSecret{}, available: map[string]bool{}}
		r.runtimes[id] = rt
	}
	return rt
}

func unreachable(err error) runtimeconfig.Result {
	o := runtimeconfig.Failed(runtimeconfig.ReasonRuntimeAPIServerUnreachable, err.Error())
	return runtimeconfig.Result{Namespace: o, ProvisioningInfo: o, OIDC: o, Administrators: o, Bootstrap: o}
}

// Configure implements ports.RuntimeConfigurator.
func (r *RuntimeConfigurator) Configure(_ context.Context, d runtimeconfig.Desired) (runtimeconfig.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.Err != nil {
		if err := r.Err(d); err != nil {
			return unreachable(err), err
		}
	}
	rt := r.runtime(d.RuntimeID)
	if rt.unreachable {
		err := fmt.Errorf("runtime %s: %w", d.RuntimeID, ports.ErrRuntimeUnreachable)
		return unreachable(err), err
	}
	var res runtimeconfig.Result
	if !rt.namespaces[runtimeconfig.Namespace] {
		rt.namespaces[runtimeconfig.Namespace] = true
		r.Writes++
	}
	res.Namespace = runtimeconfig.Done(runtimeconfig.ReasonKymaSystemNSReady, "Namespace kyma-system exists.")
	cm := memConfigMap{data: map[string]string{runtimeconfig.ProvisioningInfoKey: d.ProvisioningInfo},
		labels: map[string]string{runtimeconfig.LabelManagedBy: runtimeconfig.ManagedByValue}}
	rt.configMaps[runtimeconfig.Namespace+"/"+runtimeconfig.ProvisioningInfoName] = cm
	r.Writes++
	res.ProvisioningInfo = runtimeconfig.Done(runtimeconfig.ReasonOidcAndConfigMapsConfigured, "The kyma-provisioning-info ConfigMap is up to date.")
	res.OIDC = r.configureOIDC(rt, d)
	res.Administrators = r.configureBindings(rt, d)
	res.Bootstrap = r.configureBootstrap(rt, d)
	return res, nil
}

func (r *RuntimeConfigurator) configureOIDC(rt *memRuntime, d runtimeconfig.Desired) runtimeconfig.Outcome {
	if !d.ManageOIDC {
		return runtimeconfig.Outcome{Done: true, Skipped: true, Reason: runtimeconfig.ReasonOidcAndConfigMapsConfigured,
			Message: "The cluster has no shoot-oidc-service: no OpenIDConnect resources to keep."}
	}
	if !rt.serveOIDC {
		return runtimeconfig.Failed(runtimeconfig.ReasonOIDCNotServed, "The runtime does not serve OpenIDConnect resources (yet).")
	}
	plan := runtimeconfig.PlanOIDC(byName(rt.oidc), d.OIDC)
	for _, a := range plan.Apply {
		rt.oidc[a.Name] = runtimeconfig.ObservedOIDC{OIDCResource: a, Managed: true}
		r.Writes++
	}
	for _, name := range plan.Delete {
		delete(rt.oidc, name)
		r.Writes++
	}
	return runtimeconfig.Done(runtimeconfig.ReasonOidcAndConfigMapsConfigured,
		fmt.Sprintf("%d OpenIDConnect resources are configured.", len(d.OIDC)))
}

func (r *RuntimeConfigurator) configureBindings(rt *memRuntime, d runtimeconfig.Desired) runtimeconfig.Outcome {
	plan := runtimeconfig.PlanBindings(byName(rt.bindings), d.Administrators)
	for _, b := range append(slices.Clone(plan.Recreate), plan.Apply...) {
		rt.bindings[b.Name] = runtimeconfig.ObservedBinding{Name: b.Name, Managed: true, RoleKind: "ClusterRole",
			RoleName: runtimeconfig.ClusterAdminRole, Subjects: []runtimeconfig.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: b.User}}}
		r.Writes++
	}
	for _, name := range plan.Delete {
		delete(rt.bindings, name)
		r.Writes++
	}
	return runtimeconfig.AdministratorsOutcome(len(d.Administrators), d.ReservedAdministrators)
}

// clusterScoped are the kinds the in-memory runtime serves cluster-scoped (every other kind is served namespaced),
// as a real API server maps them.
var clusterScoped = map[string]bool{"Namespace": true, "Node": true, "PersistentVolume": true, "ClusterRole": true,
	"ClusterRoleBinding": true, "CustomResourceDefinition": true, "MutatingWebhookConfiguration": true,
	"ValidatingWebhookConfiguration": true, "ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true,
	"PriorityClass": true, "StorageClass": true, "APIService": true}

// configureBootstrap judges the whole set first, then widens the inventory, applies, prunes and narrows the
// inventory, as the real adapter does.
func (r *RuntimeConfigurator) configureBootstrap(rt *memRuntime, d runtimeconfig.Desired) runtimeconfig.Outcome {
	b := d.Bootstrap
	switch {
	case b == nil:
		return runtimeconfig.Outcome{}
	case b.Problem != "":
		return b.ProblemOutcome()
	}
	var current []runtimeconfig.AppliedObject
	if s := b.PullSecret; s != nil {
		current = append(current, runtimeconfig.AppliedObject{Version: "v1", Kind: "Secret", Namespace: runtimeconfig.Namespace, Name: s.Name})
	}
	defined := b.DefinedKinds()
	for _, o := range b.Objects {
		t := runtimeconfig.BootstrapTarget{Group: o.Group(), Kind: o.Kind, Name: o.Name, Namespace: o.Namespace, Namespaced: !clusterScoped[o.Kind]}
		if namespaced, ok := defined[[2]string{t.Group, t.Kind}]; ok {
			t.Namespaced = namespaced
		}
		ns, why := runtimeconfig.JudgeBootstrapObject(t, b.Allowed)
		if why != "" {
			return runtimeconfig.Failed(runtimeconfig.ReasonBootstrapObjectRefused, "Bootstrap manifests "+b.Source+": "+why)
		}
		current = append(current, runtimeconfig.AppliedObject{Group: t.Group, Version: o.Version(), Kind: o.Kind, Namespace: ns, Name: o.Name})
	}
	rt.bootstrapPasses++
	if rt.bootstrapFault {
		return runtimeconfig.Failed(runtimeconfig.ReasonBootstrapFailed, "Bootstrap manifests "+b.Source+
			": apply ConfigMap kyma-system/first: admission webhook \"deny.example.com\" denied the request")
	}
	inv := runtimeconfig.NewInventory(current...)
	previous := rt.inventory
	rt.inventory = previous.Union(inv)
	if s := b.PullSecret; s != nil {
		rt.secrets[runtimeconfig.Namespace+"/"+s.Name] = *s
		rt.objects["Secret/"+runtimeconfig.Namespace+"/"+s.Name] = memObject{labelled: true}
		r.Writes++
	}
	for i, o := range b.Objects {
		a := current[len(current)-len(b.Objects)+i]
		rt.objects[o.Kind+"/"+a.Namespace+"/"+o.Name] = memObject{json: slices.Clone(o.JSON), labelled: true}
		r.Writes++
	}
	for _, a := range runtimeconfig.PlanBootstrapPrune(previous, inv) {
		t := runtimeconfig.BootstrapTarget{Group: a.Group, Kind: a.Kind, Name: a.Name, Namespace: a.Namespace, Namespaced: a.Namespace != ""}
		if ns, why := runtimeconfig.JudgeBootstrapObject(t, b.Allowed); why != "" || ns != a.Namespace {
			continue
		}
		key := a.Kind + "/" + a.Namespace + "/" + a.Name
		if o, ok := rt.objects[key]; ok && o.labelled {
			delete(rt.objects, key)
			if a.Kind == "Secret" {
				delete(rt.secrets, a.Namespace+"/"+a.Name)
			}
			r.Writes++
		}
	}
	rt.inventory = inv
	var waiting []string
	for _, name := range b.Deployments() {
		if !rt.available[runtimeconfig.Namespace+"/"+name] {
			waiting = append(waiting, name)
		}
	}
	if len(waiting) > 0 {
		return runtimeconfig.Failed(runtimeconfig.ReasonBootstrapInProgress, fmt.Sprintf("Waiting for Deployments %v in kyma-system to be available.", waiting))
	}
	return runtimeconfig.Done(runtimeconfig.ReasonBootstrapCompleted, "The bootstrap manifests are applied and their Deployments are available.")
}

// Forget implements ports.RuntimeConfigurator; memory keeps the runtime's objects (they are in the runtime, not in
// the configurator).
func (r *RuntimeConfigurator) Forget(string) {}
