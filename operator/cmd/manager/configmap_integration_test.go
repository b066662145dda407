package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"
)

// TestIntegrationConfigFromConfigMap reads the landscape configuration the way the Deployment makes the manager do
// (--config-map, set by KIM_CONFIG_MAP) from a real API server: the shipped default loads, an installer-owned
// ConfigMap with other values wins when named, and broken or missing ConfigMaps stop the start with a message
// naming the object.
func TestIntegrationConfigFromConfigMap(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs a kube-apiserver")
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run `make test-integration` (it builds the envtest binaries)")
	}
	testEnv := &envtest.Environment{}
	cfg, err := testEnv.Start()
	if err != nil {
		t.Fatalf("start envtest: %v", err)
	}
	t.Cleanup(func() { _ = testEnv.Stop() })
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "kim-"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}

	// The default the bundle and config/default ship.
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "config", "manager", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	shipped := &corev1.ConfigMap{}
	if err := yaml.UnmarshalStrict(raw, shipped); err != nil {
		t.Fatalf("decode config/manager/config.yaml: %v", err)
	}
	shipped.Namespace = ns.Name
	shipped.Name = "kim-" + shipped.Name // the name prefix of config/default and the bundle
	mustCreate(t, c, shipped)
	landscape := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "landscape", Namespace: ns.Name},
		Data: map[string]string{configMapKey: "apiVersion: kim.kyma-project.io/v1alpha1\nkind: OperatorConfig\n" +
			"gardener: {project: kyma-dev}\nshoot: {defaultKubernetesVersion: \"1.34\", defaultMachineImage: {name: gardenlinux}}\n"}}
	mustCreate(t, c, landscape)
	mustCreate(t, c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "wrong-key", Namespace: ns.Name},
		Data: map[string]string{"config.yml": "x"}})
	mustCreate(t, c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "invalid", Namespace: ns.Name},
		Data: map[string]string{configMapKey: "apiVersion: kim.kyma-project.io/v1alpha1\nkind: OperatorConfig\ngardener: {project: \"\"}\n"}})

	// What the Deployment does: KIM_CONFIG_MAP from the container env, POD_NAMESPACE from the downward API; a
	// Subscription's spec.config.env replaces KIM_CONFIG_MAP.
	for _, tc := range []struct {
		reason      string
		configMap   string
		wantProject string
		wantErrHas  string
	}{
		{reason: "the shipped default", configMap: shipped.Name, wantProject: "kyma"},
		{reason: "the installer's own ConfigMap, named through the environment", configMap: "landscape", wantProject: "kyma-dev"},
		{reason: "a missing ConfigMap", configMap: "absent", wantErrHas: "ConfigMap " + ns.Name + "/absent"},
		{reason: "a ConfigMap without config.yaml", configMap: "wrong-key", wantErrHas: "has no key config.yaml"},
		{reason: "a configuration that does not validate", configMap: "invalid", wantErrHas: "gardener.project"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			s, err := parseFlags(nil, env(map[string]string{"KIM_CONFIG_MAP": tc.configMap, "POD_NAMESPACE": ns.Name}), nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := loadConfigMap(ctx, cfg, s.configMapNamespace, s.configMap)
			if tc.wantErrHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrHas) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErrHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Gardener.Project != tc.wantProject {
				t.Errorf("project %q, want %q", got.Gardener.Project, tc.wantProject)
			}
		})
	}
}

func mustCreate(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(context.Background(), obj); err != nil {
		t.Fatalf("create %s: %v", obj.GetName(), err)
	}
}
