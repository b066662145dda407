package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/internal/cli"
	"github.com/kyma-project/kim/test/sandbox/gardenbox"
)

var (
	runtimeGVK      = schema.GroupVersionKind{Group: "infrastructuremanager.kyma-project.io", Version: "v1", Kind: "RuntimeList"}
	clusterGVK      = schema.GroupVersionKind{Group: "infrastructuremanager.kyma-project.io", Version: "v1", Kind: "GardenerClusterList"}
	saKubeconfigGVK = schema.GroupVersionKind{Group: "infrastructuremanager.kyma-project.io", Version: "v1", Kind: "ServiceAccountKubeconfigList"}
)

// stateful are the kinds whose status.state the progress follows.
var stateful = map[string]bool{"Runtime": true, "GardenerCluster": true, "ServiceAccountKubeconfig": true}

// watchProgress prints a line whenever a Runtime, GardenerCluster, ServiceAccountKubeconfig or Shoot changes its
// visible state. With
// untilReady it returns nil once every sample Runtime/GardenerCluster is Ready, or an error when one
// Failed; otherwise it runs until ctx ends. The error on ctx end names what was still pending.
func watchProgress(ctx context.Context, env *gardenbox.Env, samples []sampleRef, untilReady bool, out *cli.Printer) error {
	seen := map[string]string{}
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	readySaid := false
	for {
		states := snapshot(ctx, env)
		keys := make([]string, 0, len(states))
		for k := range states {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if seen[k] != states[k].line {
				out.Say("%-60s %s", k, states[k].line)
				seen[k] = states[k].line
			}
		}
		for k := range seen {
			if _, ok := states[k]; !ok {
				out.Say("%-60s deleted", k)
				delete(seen, k)
			}
		}
		pending, failed := sampleStatus(samples, states)
		if failed != "" {
			out.Say("FAILED: %s", failed)
			if untilReady {
				return fmt.Errorf("sample failed: %s", failed)
			}
		}
		if len(pending) == 0 && !readySaid {
			readySaid = true
			if len(samples) > 0 {
				out.Say("all samples are Ready")
			}
			if untilReady {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			if len(pending) > 0 {
				return fmt.Errorf("still waiting for: %s", strings.Join(pending, "; "))
			}
			return ctx.Err()
		case <-tick.C:
		}
	}
}

type objState struct {
	state, line, message string
}

// snapshot lists the objects a person wants to follow, keyed by "Kind namespace/name".
func snapshot(ctx context.Context, env *gardenbox.Env) map[string]objState {
	out := map[string]objState{}
	for _, gvk := range []schema.GroupVersionKind{runtimeGVK, clusterGVK, saKubeconfigGVK} {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk)
		if err := env.KCPClient.List(ctx, list); err != nil {
			continue // CRD missing or shutting down: nothing to show
		}
		for _, o := range list.Items {
			state, _, _ := unstructured.NestedString(o.Object, "status", "state")
			msg := latestConditionMessage(o)
			line := "state=" + orDash(state)
			if msg != "" && state != "Ready" {
				line += "  (" + msg + ")"
			}
			out[strings.TrimSuffix(gvk.Kind, "List")+" "+o.GetNamespace()+"/"+o.GetName()] = objState{state: state, line: line, message: msg}
		}
	}
	shoots := &gardencorev1beta1.ShootList{}
	if err := env.GardenClient.List(ctx, shoots, client.InNamespace(env.Catalogue.ProjectNamespace())); err == nil {
		for _, s := range shoots.Items {
			line := "no operation yet"
			if op := s.Status.LastOperation; op != nil {
				line = fmt.Sprintf("%s %s %d%%", op.Type, op.State, op.Progress)
				for _, e := range s.Status.LastErrors {
					line += fmt.Sprintf("  %v %s", e.Codes, e.Description)
				}
			}
			if s.Status.IsHibernated {
				line += "  hibernated"
			}
			if s.DeletionTimestamp != nil {
				line += "  deleting"
			}
			out["Shoot "+s.Namespace+"/"+s.Name] = objState{line: line}
		}
	}
	return out
}

// latestConditionMessage is "reason: message" of the Ready condition (a Runtime's summary) or else of the condition
// that changed last. RFC 3339 timestamps sort as text; "~" sorts after every one of them.
func latestConditionMessage(o unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	latest, msg := "", ""
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		t, _ := m["lastTransitionTime"].(string)
		if m["type"] == "Ready" {
			t = "~" // the summary of a Runtime wins: it changes its message without a transition
		}
		if t >= latest {
			latest = t
			reason, _ := m["reason"].(string)
			text, _ := m["message"].(string)
			msg = strings.TrimSpace(reason + ": " + text)
		}
	}
	return strings.TrimPrefix(msg, ": ")
}

// sampleStatus returns the samples that are not Ready yet and the first that Failed. Only Runtimes,
// GardenerClusters and ServiceAccountKubeconfigs have a state; other samples (namespaces, secrets) count as ready
// once applied.
func sampleStatus(samples []sampleRef, states map[string]objState) (pending []string, failed string) {
	for _, s := range samples {
		if !stateful[s.kind] {
			continue
		}
		st, ok := states[s.kind+" "+s.namespace+"/"+s.name]
		switch {
		case !ok:
			pending = append(pending, s.String()+" (not found)")
		case s.kind == "Runtime" && st.state == "Failed":
			failed = s.String() + ": " + orDash(st.message)
		case st.state != "Ready":
			pending = append(pending, fmt.Sprintf("%s (state %s)", s, orDash(st.state)))
		}
	}
	return pending, failed
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
