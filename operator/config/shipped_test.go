package config

import (
	"os"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestShippedConfigMapLoads keeps the ConfigMap deployed with the manager valid: the manager refuses to start
// with a bad file, so a broken default would break every installation.
func TestShippedConfigMapLoads(t *testing.T) {
	raw, err := os.ReadFile("../../config/manager/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal(raw, &cm); err != nil {
		t.Fatalf("parse ConfigMap: %v", err)
	}
	file, ok := cm.Data["config.yaml"]
	if !ok {
		t.Fatal("the ConfigMap has no config.yaml key, but the Deployment passes --config=/etc/kim/config.yaml")
	}
	cfg, err := Parse([]byte(file))
	if err != nil {
		t.Fatalf("the shipped configuration does not load: %v", err)
	}
	if cfg.Gardener.Project == "" || cfg.Deletion.PlanGracePeriods["trial"].Duration != 0 {
		t.Errorf("unexpected shipped configuration: %+v", cfg)
	}
}
