package main

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestLatestConditionMessagePrefersReady(t *testing.T) {
	obj := func(conds ...any) unstructured.Unstructured {
		return unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": conds}}}
	}
	ready := map[string]any{"type": "Ready", "reason": "WaitingForGardener", "message": "creating", "lastTransitionTime": "2026-11-29T10:00:00Z"}
	configured := map[string]any{"type": "RuntimeConfigured", "reason": "Configured", "message": "admins bound", "lastTransitionTime": "2026-11-29T10:05:00Z"}
	if got := latestConditionMessage(obj(ready, configured)); got != "WaitingForGardener: creating" {
		t.Errorf("with a Ready condition: %q, want the Ready condition", got)
	}
	older := map[string]any{"type": "A", "reason": "Old", "lastTransitionTime": "2026-11-29T09:00:00Z"}
	if got := latestConditionMessage(obj(configured, older)); got != "Configured: admins bound" {
		t.Errorf("without a Ready condition: %q, want the latest transition", got)
	}
}

func TestSampleStatusWaitsForEveryStatefulKind(t *testing.T) {
	samples := []sampleRef{{kind: "Runtime", namespace: "kcp-system", name: "rid"}, {kind: "ServiceAccountKubeconfig", namespace: "kcp-system", name: "lm"},
		{kind: "ConfigMap", namespace: "kcp-system", name: "cm"}}
	states := map[string]objState{"Runtime kcp-system/rid": {state: "Ready"}, "ServiceAccountKubeconfig kcp-system/lm": {state: "Pending"}}
	pending, failed := sampleStatus(samples, states)
	if len(pending) != 1 || !strings.Contains(pending[0], "ServiceAccountKubeconfig kcp-system/lm") || failed != "" {
		t.Errorf("pending %v, failed %q; want the ServiceAccountKubeconfig pending", pending, failed)
	}
	states["ServiceAccountKubeconfig kcp-system/lm"] = objState{state: "Ready"}
	if pending, _ := sampleStatus(samples, states); len(pending) != 0 {
		t.Errorf("pending %v once everything is Ready", pending)
	}
}
