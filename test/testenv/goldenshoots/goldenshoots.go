// Package goldenshoots reads the golden data set of shoot generation, adapters/gardener/testdata: the operator
// configuration each golden shoot is generated with. The translation's unit tests (adapters/gardener/translate) and
// the Gardener adapter's tests share it; it imports neither package, so both may import it.
package goldenshoots

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/operator/config"
	"github.com/kyma-project/kim/test/testenv/keb"
)

// Dir is the golden data set's directory, adapters/gardener/testdata.
func Dir() string { return filepath.Join(keb.RepoRoot(), "adapters", "gardener", "testdata") }

// Config is testdata/config.yaml, with testdata/configs/<name>.yaml laid over it when that exists (a landscape
// variant such as Gardener-internal DNS), plus the control plane's egress CIDRs as the operator reads them at run
// time from the KCP ConfigMap testdata/kcp/acl-ip-list.yaml.
func Config(t testing.TB, name string) shoot.Config {
	t.Helper()
	base, err := os.ReadFile(filepath.Join(Dir(), "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(base, &doc); err != nil {
		t.Fatal(err)
	}
	if overlay, err := os.ReadFile(filepath.Join(Dir(), "configs", name+".yaml")); err == nil {
		var o map[string]any
		if err := yaml.Unmarshal(overlay, &o); err != nil {
			t.Fatal(err)
		}
		doc = mergeMaps(doc, o)
	}
	merged, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(merged)
	if err != nil {
		t.Fatalf("golden configuration for %s: %v", name, err)
	}
	sc := cfg.ShootConfig()
	data, err := os.ReadFile(filepath.Join(Dir(), "kcp", "acl-ip-list.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict(data, &cm); err != nil {
		t.Fatal(err)
	}
	if sc.ACL.ControlPlaneCIDRs, err = kube.ParseControlPlaneAddresses(cm.Data); err != nil {
		t.Fatal(err)
	}
	return sc
}

// mergeMaps lays overlay over base, map by map; any other value of overlay replaces base's.
func mergeMaps(base, overlay map[string]any) map[string]any {
	for k, v := range overlay {
		if bm, ok := base[k].(map[string]any); ok {
			if om, ok := v.(map[string]any); ok {
				base[k] = mergeMaps(bm, om)
				continue
			}
		}
		base[k] = v
	}
	return base
}

// ObjectYAML renders an object without status and empty creationTimestamp as one would write it by hand: the form
// of the golden files.
func ObjectYAML(t testing.TB, obj any) []byte {
	t.Helper()
	js, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "status")
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
	}
	out, err := yaml.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// ExtensionsText shows extensions with their providerConfigs as the bytes they are.
func ExtensionsText(t testing.TB, exts []gardencorev1beta1.Extension) string {
	t.Helper()
	var b strings.Builder
	for _, e := range exts {
		b.WriteString(e.Type)
		if e.Disabled != nil {
			b.WriteString(" disabled=")
			b.WriteString(map[bool]string{true: "true", false: "false"}[*e.Disabled])
		}
		if e.ProviderConfig != nil {
			b.WriteString(" " + string(e.ProviderConfig.Raw))
		}
		b.WriteString("\n")
	}
	return b.String()
}
