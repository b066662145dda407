package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/test/bench/harness"
	"github.com/kyma-project/kim/test/testenv"
	"github.com/kyma-project/kim/test/testenv/keb"
)

// A seeded fleet (-seed) is converged before the measured manager starts: the harness lets a manager provision one
// Runtime of each plan and one extra GardenerCluster (the templates), stops it, and writes every other Runtime and
// cluster as copies of what the operator and the gardenlet wrote for its template (shoot with status, CA objects,
// authentication ConfigMap, GardenerClusters, kubeconfig Secrets, Runtime with status), names, IDs and UIDs
// replaced. Provisioning 10,000 Runtimes through the in-process gardener-apiserver would take hours on two cores;
// copying takes minutes, and what is measured afterwards (a start on a converged fleet, the steady state, the
// restart) is what a landscape's operator does most of its life.

// seedKinds are the kinds copied per template, in the order they are created: a shoot's admission wants the
// authentication ConfigMap it names to exist, which the shoot then owns. A copy's owner references and status point
// at the UIDs of the copies; a reference to an owner not copied yet is added once it is (copyAs).
var seedKinds = struct{ garden, kcp []schema.GroupVersionKind }{
	garden: []schema.GroupVersionKind{
		{Version: "v1", Kind: "ConfigMap"},
		{Version: "v1", Kind: "Secret"},
		{Group: "core.gardener.cloud", Version: "v1beta1", Kind: "Shoot"},
		{Group: "core.gardener.cloud", Version: "v1beta1", Kind: "InternalSecret"},
	},
	kcp: []schema.GroupVersionKind{
		imv1.GroupVersion.WithKind("Runtime"),
		imv1.GroupVersion.WithKind("GardenerCluster"),
		{Version: "v1", Kind: "Secret"},
		{Version: "v1", Kind: "ConfigMap"},
	},
}

// template is what the operator and the gardenlet wrote for one template Runtime (or extra cluster): the objects in
// creation order with the client of their API server, and the identity the copies replace.
type template struct {
	runtimeID, shoot string
	objects          []seedObject
}

type seedObject struct {
	c   client.Client
	obj *unstructured.Unstructured
}

// seedResult is what seeding took (reported, not measured as the operator's work).
type seedResult struct {
	templates        int
	templatesReady   time.Duration
	copied, requests int64
	copyTime         time.Duration
	// settle is what the manager that took the copies on once did (settleCopies), in settleTime.
	settle     counters
	settleTime time.Duration
}

// seedFleet provisions the templates with a manager of its own, then copies them into a fleet of c.runtimes Runtimes
// and c.extra extra GardenerClusters with the gardenlet held (it would otherwise start a Create for every copied
// shoot before its status is written).
func seedFleet(ctx context.Context, c config, w *fleetWorld, args []string, r *report) error {
	start := time.Now()
	nPlans := min(len(w.plans), c.runtimes)
	harness.Logf("seeding: provisioning %d template Runtimes and %d template cluster with a manager of its own", nPlans, min(1, c.extra))
	if c.extra > 0 {
		names, ids := w.extraShoots()
		if err := w.CreateShoots(ctx, names[:1], ids[:1], 1, c.timeout); err != nil {
			return err
		}
	}
	m, err := harness.StartManager(ctx, c.managerBin, c.workDir, filepath.Join(c.workDir, "manager-seed.log"), "runtime", args)
	if err != nil {
		return err
	}
	var objs []client.Object
	for i := range nPlans {
		objs = append(objs, keb.WithIdentity(w.plans[i], keb.RuntimeID(i), keb.ShootName(i)))
	}
	if c.extra > 0 {
		objs = append(objs, keb.GardenerCluster(keb.RuntimeID(extraOffset), keb.ShootName(extraOffset)))
	}
	for _, o := range objs {
		if err := w.Env.KCPClient.Create(ctx, o); err != nil {
			m.Stop()
			return fmt.Errorf("create template %s: %w", o.GetName(), err)
		}
	}
	// Ready first (the manager can be quiet for a while as a shoot is created), then idle (its last writes done).
	err = testenv.Poll(ctx, c.timeout, time.Second, "templates Ready", func() (bool, string) {
		err := w.allReady(ctx, nPlans, nPlans+min(1, c.extra))
		return err == nil, fmt.Sprint(err)
	}, harness.ProgressLog)
	if err == nil {
		_, _, err = waitIdle(ctx, m, w, 2*nPlans+min(1, c.extra), c.quiet, c.timeout)
	}
	m.Stop()
	if err != nil {
		return fmt.Errorf("templates: %w", err)
	}
	r.seed.templates, r.seed.templatesReady = len(objs), time.Since(start)

	var tpls []template
	for i := range nPlans {
		t, err := w.readTemplate(ctx, keb.RuntimeID(i), keb.ShootName(i))
		if err != nil {
			return err
		}
		tpls = append(tpls, t)
	}
	var extraTpl template
	if c.extra > 0 {
		if extraTpl, err = w.readTemplate(ctx, keb.RuntimeID(extraOffset), keb.ShootName(extraOffset)); err != nil {
			return err
		}
	}
	for _, t := range append(tpls, extraTpl) {
		if len(t.objects) == 0 {
			continue // no extra clusters: no template for them
		}
		var names []string
		for _, o := range t.objects {
			names = append(names, o.obj.GetKind()+" "+o.obj.GetName())
		}
		harness.Logf("seeding: template %s copies %s", t.runtimeID, strings.Join(names, ", "))
	}

	release := w.Env.Gardenlet.Hold()
	defer release()
	copyStart := time.Now()
	jobs := (c.runtimes - nPlans) + max(0, c.extra-1)
	err = harness.Parallel(ctx, jobs, seedWorkers, func(ctx context.Context, j int) error {
		if j < c.runtimes-nPlans {
			i := nPlans + j
			return tpls[i%nPlans].copyAs(ctx, keb.RuntimeID(i), keb.ShootName(i), &r.seed)
		}
		i := 1 + j - (c.runtimes - nPlans)
		return extraTpl.copyAs(ctx, keb.RuntimeID(extraOffset+i), keb.ShootName(extraOffset+i), &r.seed)
	})
	release()
	r.seed.copyTime = time.Since(copyStart)
	if err != nil {
		return fmt.Errorf("seeding: %w", err)
	}
	harness.Logf("seeding: %d objects copied in %s (%d requests)", r.seed.copied, r.seed.copyTime.Round(time.Second), r.seed.requests)
	return settleCopies(ctx, c, w, args, r)
}

// settleCopies lets a manager take the copies on once, with a Gardener rate limit well above the shipped one: a copied
// shoot carries its template's spec hash (the hash of a spec with the template's names), so the operator applies each
// copy once (and takes over the fields the harness wrote). Afterwards the fleet is what the operator leaves behind,
// and the measured start finds nothing to write.
func settleCopies(ctx context.Context, c config, w *fleetWorld, args []string, r *report) error {
	start := time.Now()
	settleArgs := append(slices.Clone(args), "--gardener-qps=1000", "--gardener-burst=1000")
	m, err := harness.StartManager(ctx, c.managerBin, c.workDir, filepath.Join(c.workDir, "manager-settle.log"), "runtime", settleArgs)
	if err != nil {
		return err
	}
	defer m.Stop()
	counters, _, err := waitIdle(ctx, m, w, 3*c.runtimes+c.extra, c.quiet, c.timeout)
	if err != nil {
		return fmt.Errorf("settling the copies: %w", err)
	}
	if err := w.allReady(ctx, c.runtimes, c.runtimes+c.extra); err != nil {
		return fmt.Errorf("settling the copies: %w", err)
	}
	r.seed.settle, r.seed.settleTime = counters, time.Since(start)
	harness.Logf("seeding: the copies settled in %s: Gardener %s; KCP %s", r.seed.settleTime.Round(time.Second),
		orNone(join(counters.garden)), orNone(join(counters.kcp)))
	return nil
}

// allReady checks that every Runtime and GardenerCluster of the fleet is Ready (the templates before they are
// copied, the copies once settled).
func (w *fleetWorld) allReady(ctx context.Context, runtimes, clusters int) error {
	p, err := w.progress(ctx)
	if err != nil {
		return err
	}
	if p.runtimesReady != runtimes || p.clustersReady != clusters {
		return fmt.Errorf("%d/%d Runtimes and %d/%d GardenerClusters Ready (runtime states %v)", p.runtimesReady, runtimes,
			p.clustersReady, clusters, p.runtimeStates)
	}
	return nil
}

// readTemplate collects the objects of the garden's project and the KCP namespace whose metadata names the runtime ID
// or the shoot.
func (w *fleetWorld) readTemplate(ctx context.Context, runtimeID, shoot string) (template, error) {
	t := template{runtimeID: runtimeID, shoot: shoot}
	for _, plane := range []struct {
		c         client.Client
		namespace string
		kinds     []schema.GroupVersionKind
	}{{w.Env.GardenClient, w.ShootNamespace, seedKinds.garden}, {w.Env.KCPClient, keb.Namespace, seedKinds.kcp}} {
		for _, gvk := range plane.kinds {
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
			if err := plane.c.List(ctx, list, client.InNamespace(plane.namespace)); err != nil {
				return t, fmt.Errorf("list %s: %w", gvk.Kind, err)
			}
			for i := range list.Items {
				o := &list.Items[i]
				meta := o.DeepCopy()
				meta.SetManagedFields(nil)
				raw, err := json.Marshal(meta.Object["metadata"])
				if err != nil {
					return t, err
				}
				if strings.Contains(string(raw), runtimeID) || strings.Contains(string(raw), shoot) {
					o.SetGroupVersionKind(gvk)
					t.objects = append(t.objects, seedObject{c: plane.c, obj: o})
				}
			}
		}
	}
	if len(t.objects) == 0 {
		return t, fmt.Errorf("template %s: nothing found", runtimeID)
	}
	return t, nil
}

// copyAs writes the template's objects for another runtime ID and shoot name: each object created without its
// server-set metadata, then its status (where it has one) written with the copies' UIDs and generations, and last
// the owner references to objects copied after it.
func (t template) copyAs(ctx context.Context, runtimeID, shoot string, res *seedResult) error {
	uids := map[string]string{}
	replacer := func() *strings.Replacer {
		pairs := []string{t.runtimeID, runtimeID, t.shoot, shoot}
		for from, to := range uids {
			pairs = append(pairs, from, to)
		}
		return strings.NewReplacer(pairs...)
	}
	var owned []seedObject // copies whose owner was copied after them, with the template's owner references
	for _, so := range t.objects {
		body := so.obj.DeepCopy()
		for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "generation", "managedFields", "selfLink"} {
			unstructured.RemoveNestedField(body.Object, "metadata", f)
		}
		status, hasStatus := body.Object["status"]
		delete(body.Object, "status")
		refs := body.GetOwnerReferences()
		if slices.ContainsFunc(refs, func(r metav1.OwnerReference) bool { _, ok := uids[string(r.UID)]; return !ok }) {
			body.SetOwnerReferences(nil)
		} else {
			refs = nil
		}
		obj, err := replaced(body, replacer())
		if err != nil {
			return err
		}
		// Gardener refuses its own finalizer on a create (only the gardenlet adds it): added by an update after it.
		finalizers := obj.GetFinalizers()
		obj.SetFinalizers(nil)
		if err := so.c.Create(ctx, obj, client.FieldOwner(seedManager)); err != nil {
			return fmt.Errorf("copy %s %s as %s: %w", so.obj.GetKind(), so.obj.GetName(), obj.GetName(), err)
		}
		atomic.AddInt64(&res.copied, 1)
		atomic.AddInt64(&res.requests, 1)
		uids[string(so.obj.GetUID())] = string(obj.GetUID())
		if owned, err := operatorFields(so.obj); err != nil {
			return err
		} else if owned != nil {
			owned, err := replaced(&unstructured.Unstructured{Object: owned}, replacer())
			if err != nil {
				return err
			}
			if err := appliedByOperator(ctx, so.c, obj, owned.Object, res); err != nil {
				return err
			}
		}
		if len(refs) > 0 {
			owned = append(owned, seedObject{c: so.c, obj: obj})
			obj.SetOwnerReferences(refs)
		}
		if len(finalizers) > 0 {
			obj.SetFinalizers(finalizers)
			if err := so.c.Update(ctx, obj); err != nil {
				return fmt.Errorf("add the finalizers of %s %s: %w", obj.GetKind(), obj.GetName(), err)
			}
			atomic.AddInt64(&res.requests, 1)
		}
		if !hasStatus {
			continue
		}
		st, err := replaced(&unstructured.Unstructured{Object: map[string]any{"status": status}}, replacer())
		if err != nil {
			return err
		}
		sameGeneration(st.Object, so.obj.GetGeneration(), obj.GetGeneration())
		obj.Object["status"] = st.Object["status"]
		if err := so.c.Status().Update(ctx, obj); err != nil {
			return fmt.Errorf("write the status of %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		atomic.AddInt64(&res.requests, 1)
	}
	for _, so := range owned {
		withRefs, err := replaced(so.obj, replacer())
		if err != nil {
			return err
		}
		if err := so.c.Update(ctx, withRefs); err != nil {
			return fmt.Errorf("set the owners of %s %s: %w", so.obj.GetKind(), so.obj.GetName(), err)
		}
		atomic.AddInt64(&res.requests, 1)
	}
	return nil
}

// seedWorkers is how many copies are written at once: each copy is a dozen requests one after the other, and the
// API servers answer them with latency, not with the machine's cores busy.
const seedWorkers = 128

// seedManager is the field manager of the harness's copies.
const seedManager = "kim-bench-seed"

// replaced is u with every string of its JSON replaced by rep.
func replaced(u *unstructured.Unstructured, rep *strings.Replacer) (*unstructured.Unstructured, error) {
	raw, err := json.Marshal(u.Object)
	if err != nil {
		return nil, err
	}
	out := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(rep.Replace(string(raw))), &out.Object); err != nil {
		return nil, fmt.Errorf("copy of %s: %w", u.GetName(), err)
	}
	return out, nil
}

// sameGeneration sets every observedGeneration in v that observed the template's generation to the copy's: a copy is
// created at generation 1, its template may have been updated since.
func sameGeneration(v any, from, to int64) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if n, ok := e.(float64); ok && k == "observedGeneration" && int64(n) == from {
				x[k] = float64(to)
				continue
			}
			sameGeneration(e, from, to)
		}
	case []any:
		for _, e := range x {
			sameGeneration(e, from, to)
		}
	}
}
