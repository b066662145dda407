package main

import (
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
