package main

import (
	"io"
	"os"
	"path"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"
)

// previousDeployment is the previous manager's Deployment as its public manifests render it
// (testdata/previous-deployment.yaml, generated): the manager container's arguments and the files it mounts
// (mount directory -> ConfigMap or Secret key file name).
func previousDeployment(t *testing.T) (args []string, mounts map[string]bool) {
	t.Helper()
	raw, err := os.ReadFile("testdata/previous-deployment.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var d appsv1.Deployment
	if err := yaml.UnmarshalStrict(raw, &d); err != nil {
		t.Fatal(err)
	}
	files := map[string][]string{} // volume -> the paths of its items
	for _, v := range d.Spec.Template.Spec.Volumes {
		switch {
		case v.ConfigMap != nil:
			for _, it := range v.ConfigMap.Items {
				files[v.Name] = append(files[v.Name], it.Path)
			}
		case v.Secret != nil:
			for _, it := range v.Secret.Items {
				files[v.Name] = append(files[v.Name], it.Path)
			}
		}
	}
	mounts = map[string]bool{}
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name != "manager" {
			continue
		}
		args = c.Args
		for _, m := range c.VolumeMounts {
			for _, f := range files[m.Name] {
				mounts[path.Join(m.MountPath, f)] = true
			}
		}
	}
	return args, mounts
}

// TestMigrationPreviousDeployment: the previous manager's own Deployment, unchanged (issue 39 item 5): its arguments
// name no configuration (no --converter-config-filepath, no ConfigMap of this operator), and it mounts the converter
// configuration at the previous manager's default path. The manager reads that file as the previous manager did, and
// starts with the configuration it describes; without the file the start is refused, saying where it looked.
func TestMigrationPreviousDeployment(t *testing.T) {
	args, mounts := previousDeployment(t)
	if len(args) == 0 || strings.Contains(strings.Join(args, " "), "converter-config-filepath") {
		t.Fatalf("the previous Deployment's arguments changed: %v", args)
	}
	for _, f := range []string{previousConverterPath, "/gardener/tenant/config", "/maintenance-window-config/config", "/gardener/credentials/kubeconfig"} {
		if !mounts[f] {
			t.Fatalf("the previous Deployment no longer mounts %s: %v", f, mounts)
		}
	}
	exists := converterFileExists
	t.Cleanup(func() { converterFileExists = exists })

	t.Run("the converter file at the default path is the configuration", func(t *testing.T) {
		converterFileExists = func(p string) bool { return mounts[p] }
		s, err := parseFlags(args, env(nil), io.Discard)
		if err != nil {
			t.Fatalf("the previous Deployment's arguments are refused: %v", err)
		}
		if s.previous.converterFile != previousConverterPath {
			t.Fatalf("converter file %q, want the default %s", s.previous.converterFile, previousConverterPath)
		}
		if !strings.Contains(strings.Join(s.previous.warnings, "\n"), previousConverterPath+" (its default path)") {
			t.Errorf("no warning says the default path was read: %v", s.previous.warnings)
		}
		// The rendered Deployment names the project kyma-dev; the landscape's converter file names the same.
		converter, err := os.ReadFile(previousMounts[previousConverterPath])
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := startupConfig(t, s, map[string]string{
			previousConverterPath: strings.ReplaceAll(string(converter), `"kyma-prod"`, `"kyma-dev"`)})
		if err != nil {
			t.Fatalf("the previous Deployment does not start: %v", err)
		}
		if cfg.Gardener.Project != "kyma-dev" || s.gardenKubeconfig != "/gardener/credentials/kubeconfig" || !cfg.Shoot.AuditLog.Enabled ||
			cfg.Shoot.AuditLog.Tenants["aws"]["eu-central-1"].SecretName != "auditlog-credentials-eu10" {
			t.Errorf("configuration: project %q, garden kubeconfig %q, audit log %+v", cfg.Gardener.Project, s.gardenKubeconfig, cfg.Shoot.AuditLog)
		}
	})
	t.Run("no file at the default path: refused, naming it", func(t *testing.T) {
		converterFileExists = func(string) bool { return false }
		_, err := parseFlags(args, env(nil), io.Discard)
		if err == nil || !strings.Contains(err.Error(), previousConverterPath) {
			t.Fatalf("error %v, want a refusal naming %s", err, previousConverterPath)
		}
	})
	t.Run("a ConfigMap of this operator named: the default path is not read", func(t *testing.T) {
		converterFileExists = func(p string) bool { return mounts[p] }
		s, err := parseFlags(args, env(map[string]string{"KIM_CONFIG_MAP": "kim-manager-config"}), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if s.previous.converterFile != "" {
			t.Errorf("converter file %q read next to a named ConfigMap", s.previous.converterFile)
		}
	})
}
