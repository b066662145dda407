package usecase_test

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/kyma-project/kim/adapters/fake"
	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
)

// The kubeconfig part of the safety model: GardenerClusters created by KEB and by hostile authors (naming another
// runtime's Secret, a foreign Secret, a Secret in another namespace, another runtime's shoot), Secrets planted by
// others (another team, KEB's legacy kubeconfig, an older operator), rotations on time and forced, deletions with
// and without the finalizer, and a controller cache that lags. The rotation use case acts for one GardenerCluster
// per step; the checker judges every change of the Secret store against an ownership oracle of its own.

const otherNamespace = "other-ns"

// modelGC is a GardenerCluster in the model's KCP.
type modelGC struct {
	namespace, name, shoot string
	secret                 ports.SecretRef
	labels                 map[string]string
	force, deleting        bool
	finalizer              bool
	history                kubeconfig.History
}

func (g modelGC) key() string { return g.namespace + "/" + g.name }

func (g modelGC) request() ports.KubeconfigRequest {
	return ports.KubeconfigRequest{Namespace: g.namespace, Name: g.name, Labels: maps.Clone(g.labels), Shoot: g.shoot,
		Secret: g.secret, Force: g.force, Deleting: g.deleting, History: g.history}
}

// clusters are the model's GardenerClusters: live (the API server) and cached (what the controller sees).
type clusters struct {
	live   map[string]*modelGC
	cached map[string]modelGC
	lag    bool
}

// Confirm implements ports.KubeconfigRequests from the live state.
func (c *clusters) Confirm(_ context.Context, namespace, name string) (ports.KubeconfigRequest, bool, error) {
	g, ok := c.live[namespace+"/"+name]
	if !ok {
		return ports.KubeconfigRequest{}, false, nil
	}
	return g.request(), true, nil
}

// view is the GardenerCluster as the controller's cache shows it.
func (c *clusters) view(key string) (modelGC, bool) {
	if c.lag {
		g, ok := c.cached[key]
		return g, ok
	}
	g, ok := c.live[key]
	if !ok {
		return modelGC{}, false
	}
	return *g, true
}

func (c *clusters) sync() {
	c.cached = map[string]modelGC{}
	for k, g := range c.live {
		c.cached[k] = *g
	}
}

// origin is who a Secret belongs to, as the model knows it (never as the operator infers it).
type origin struct {
	kind  string // "foreign", "legacy" (KEB's Secret of runtime owner), "older" (an older operator's, of GC owner), "operator" (written for GC owner)
	owner string
}

// kubeconfigs is the model's kubeconfig world.
type kubeconfigs struct {
	clusters *clusters
	store    *fake.KubeconfigSecretStore
	issuer   *fake.KubeconfigIssuer
	rotator  *usecase.Rotator
	garden   *fake.Garden
	origins  map[string]origin // ns/name -> origin
	// actor is the GardenerCluster the rotation use case acted for in the current step ("" when none did).
	actor string
	// issuedWrong records a kubeconfig written for a GardenerCluster of a shoot that does not name its runtime
	// (checkSecrets reports it).
	issuedWrong error
}

func newKubeconfigs(garden *fake.Garden, clock *fake.Clock) kubeconfigs {
	policy, err := kubeconfig.NewPolicy(24*time.Hour, 0.6)
	if err != nil {
		panic(err)
	}
	k := kubeconfigs{clusters: &clusters{live: map[string]*modelGC{}, cached: map[string]modelGC{}},
		store: fake.NewKubeconfigSecretStore(), issuer: fake.NewKubeconfigIssuer(clock), garden: garden, origins: map[string]origin{}}
	k.rotator = &usecase.Rotator{Issuer: k.issuer, Store: k.store, Shoots: garden, Policy: policy}
	return k
}

var hostileNames = []string{"h-one", "h-two"}

// applyKubeconfig performs one kubeconfig step.
func (w *world) applyKubeconfig(s step, now time.Time) {
	id, shootName := modelIDs[s.Runtime], modelShoots[s.Shoot]
	if rt, ok := w.runtimes[id]; ok {
		shootName = rt.shoot
	}
	c := w.clusters
	switch s.Op {
	case opGCCreate: // KEB creates the GardenerCluster of a runtime
		w.putGC(modelGC{namespace: modelNamespace, name: id, shoot: shootName, labels: map[string]string{kubeconfig.LabelRuntimeID: id},
			secret: ports.SecretRef{Namespace: modelNamespace, Name: kubeconfig.SecretName(id), Key: kubeconfig.SecretKey}})
	case opGCHostile:
		w.putGC(hostileGC(s, id, shootName, w.garden.Shoots()))
	case opGCReconcile:
		keys := w.clusterKeys()
		if len(keys) == 0 {
			return
		}
		w.reconcileGC(keys[s.N%len(keys)], now)
	case opGCForce:
		if g, ok := c.live[w.pickGC(s)]; ok {
			g.force = true
		}
	case opGCDelete:
		if key := w.pickGC(s); key != "" {
			if c.live[key].finalizer {
				c.live[key].deleting = true
			} else {
				delete(c.live, key) // deleted before the operator adopted it: no finalizer held it
			}
		}
	case opSecretPlant:
		w.plantSecret(s, id)
	}
}

// hostileGC is a GardenerCluster someone with create rights in the KCP writes to make the operator act for them.
func hostileGC(s step, victim, shootName string, shoots []string) modelGC {
	name := hostileNames[s.N%len(hostileNames)]
	if s.On {
		name = victim // named like a runtime (it is that runtime's GardenerCluster if KEB has not created one)
	}
	if len(shoots) > 0 && s.N%3 == 0 {
		shootName = shoots[s.N%len(shoots)] // a shoot that exists, of whichever runtime
	}
	g := modelGC{namespace: modelNamespace, name: name, shoot: shootName, labels: map[string]string{},
		secret: ports.SecretRef{Namespace: modelNamespace, Name: kubeconfig.SecretName(name), Key: kubeconfig.SecretKey}}
	switch s.N % 4 {
	case 0: // another runtime's kubeconfig Secret
		g.secret.Name = kubeconfig.SecretName(victim)
	case 1: // a Secret of another team
		g.secret.Name = "db-credentials"
	case 2: // a Secret in another namespace
		g.secret.Namespace = otherNamespace
	}
	return g
}

func (w *world) putGC(g modelGC) {
	if _, ok := w.clusters.live[g.key()]; !ok {
		w.clusters.live[g.key()] = &g
	}
}

// plantSecret stores a Secret someone else wrote, unless one exists under its name.
func (w *world) plantSecret(s step, id string) {
	ref, o := ports.SecretRef{Namespace: modelNamespace, Name: "db-credentials"}, origin{kind: "foreign"}
	labels, annotations := map[string]string{}, map[string]string{}
	switch s.N % 4 {
	case 1: // KEB's kubeconfig Secret of a runtime, from before the operator
		ref.Name, o = kubeconfig.SecretName(id), origin{kind: "legacy", owner: id}
		labels[kubeconfig.LabelRuntimeID] = id
	case 2: // an older operator's Secret: its labels, no owner annotation
		ref.Name, o = kubeconfig.SecretName(id), origin{kind: "older", owner: modelNamespace + "/" + id}
		labels[wire.LabelManagedBy], labels[kubeconfig.LabelClusterName] = wire.ManagedByValue, id
		annotations[kubeconfig.AnnotationLastSync] = "2026-01-01T00:00:00Z"
	case 3: // a kubeconfig-looking Secret in another namespace
		ref = ports.SecretRef{Namespace: otherNamespace, Name: kubeconfig.SecretName(id)}
	}
	if w.store.Exists(ref.Namespace, ref.Name) {
		return
	}
	w.store.Put(ref.Namespace, ref.Name, map[string][]byte{kubeconfig.SecretKey: []byte("someone else's")}, labels, annotations)
	w.origins[ref.Namespace+"/"+ref.Name] = o
}

func (w *world) clusterKeys() []string {
	keys := make([]string, 0, len(w.clusters.live)+len(w.clusters.cached))
	for _, id := range append(append([]string{}, modelIDs...), hostileNames...) {
		k := modelNamespace + "/" + id
		if _, ok := w.clusters.live[k]; ok {
			keys = append(keys, k)
		} else if _, ok := w.clusters.cached[k]; ok {
			keys = append(keys, k) // deleted, but the cache or the queue still has it
		}
	}
	return keys
}

func (w *world) pickGC(s step) string {
	var keys []string
	for _, k := range w.clusterKeys() {
		if _, ok := w.clusters.live[k]; ok {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return ""
	}
	return keys[s.N%len(keys)]
}

// judgeIssuedShoot checks, against the garden's truth rather than the operator's (lagging) view, that the kubeconfig
// just written for g is of a shoot created for g's runtime (the GardenerCluster's name): never of another
// runtime's shoot, nor of one that names no runtime (a foreign shoot).
func (w *world) judgeIssuedShoot(g modelGC, shootName string) {
	s, ok := w.garden.Observed(shootName)
	if ok && s.Marks.RuntimeID != g.name && w.issuedWrong == nil {
		w.issuedWrong = fmt.Errorf("GardenerCluster %s got the kubeconfig of shoot %s, created for runtime %q", g.key(), shootName, s.Marks.RuntimeID)
	}
}

// reconcileGC plays the GardenerCluster controller for one key: the skeleton's branches around the use case.
func (w *world) reconcileGC(key string, now time.Time) {
	ctx := contextFor()
	w.actor = key
	for _, name := range w.garden.Shoots() { // Gardener issues kubeconfigs for the shoots that exist
		w.issuer.AddShoot(name)
	}
	g, ok := w.clusters.view(key)
	switch {
	case !ok:
		ns, name := splitKey(key)
		_, _ = w.rotator.RemoveOrphans(ctx, ns, name, w.clusters)
	case g.deleting:
		if !g.finalizer {
			return
		}
		if res, err := w.rotator.Remove(ctx, g.request()); err == nil && res.Release {
			delete(w.clusters.live, key)
		}
	default:
		live := w.clusters.live[key]
		if live != nil {
			live.finalizer = true // the skeleton adds it before the use case runs
		}
		res, err := w.rotator.Rotate(ctx, g.request(), w.clusters, now)
		if err == nil && res.Written {
			w.judgeIssuedShoot(g, res.Request.Shoot)
		}
		if err != nil || res.Gone || live == nil {
			return
		}
		if res.ClearForce {
			live.force = false
		}
		st := res.Status
		if !st.Keep {
			live.history.Succeeded = st.OK
		}
		live.history.Issued = live.history.Issued || st.State != kubeconfig.StatePending
	}
}
