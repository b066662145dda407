package gardener

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim/adapters/gardener/translate"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/internal/mapping"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/config"
)

// previousConfigMapData are ConfigMaps `structured-auth-config-<shoot>` exactly as the previous infrastructure
// manager (f271b80a, pkg/gardener/structuredauth) wrote their key config.yaml: produced by running its code on the
// inputs named, not written by hand.
const (
	// The operator issuer of the converter file, username prefix "-" (the value of its own converter tests).
	previousOperatorDash = `apiVersion: apiserver.config.k8s.io/v1beta1
jwt:
- claimMappings:
    groups:
      claim: groups
      prefix: ""
    username:
      claim: sub
      prefix: '-'
  issuer:
    audiences:
    - kcp-operators
    url: https://kcp-operators.accounts.example.com
kind: AuthenticationConfiguration
`
	// The operator issuer of the converter file, username prefix "kcp-op:".
	previousOperatorPrefixed = `apiVersion: apiserver.config.k8s.io/v1beta1
jwt:
- claimMappings:
    groups:
      claim: groups
      prefix: ""
    username:
      claim: sub
      prefix: 'kcp-op:'
  issuer:
    audiences:
    - kcp-operators
    url: https://kcp-operators.accounts.example.com
kind: AuthenticationConfiguration
`
	// The legacy oidcConfig of a Runtime KEB created before it moved to additionalOidcConfig (March 2025): KEB's
	// default customer issuer, no groupsPrefix.
	previousLegacy = `apiVersion: apiserver.config.k8s.io/v1beta1
jwt:
- claimMappings:
    groups:
      claim: groups
      prefix: ""
    username:
      claim: sub
      prefix: '-'
  issuer:
    audiences:
    - 9bd05ed7-a930-44e6-8c79-e6defeb7dec9
    url: https://kymatest.accounts400.ondemand.com
kind: AuthenticationConfiguration
`
	// A legacy oidcConfig without groups claim (email, empty username prefix, groups prefix "g:"): a groups mapping
	// all the same.
	previousNoGroupsClaim = `apiVersion: apiserver.config.k8s.io/v1beta1
jwt:
- claimMappings:
    groups:
      claim: ""
      prefix: 'g:'
    username:
      claim: email
      prefix: ""
  issuer:
    audiences:
    - c
    url: https://i.example.com
kind: AuthenticationConfiguration
`
)

// oldKEBOIDC is the oidcConfig KEB wrote into every Runtime until March 2025 (its chart's skrOIDCDefaultValues).
const oldKEBOIDC = `{"clientID": "9bd05ed7-a930-44e6-8c79-e6defeb7dec9", "groupsClaim": "groups",
  "issuerURL": "https://kymatest.accounts400.ondemand.com", "signingAlgs": ["RS256"], "usernameClaim": "sub", "usernamePrefix": "-"}`

// TestPreviousAuthenticationConfigMapUnchanged: with the previous manager's converter file mapped as it is, the first
// write to a shoot adopted from it (a KEB-shaped Runtime; an older one with the legacy oidcConfig) keeps the data of
// the structured authentication ConfigMap byte for byte, under the name the shoot references; kim migrate finds no
// difference. A landscape that chooses this operator's rules (shoot.authenticationStyle: kim) gets them.
func TestPreviousAuthenticationConfigMapUnchanged(t *testing.T) {
	for _, tc := range []struct {
		reason         string
		usernamePrefix string // of the converter file's defaultOperatorOidc
		document       string // the operator's own configuration next to the converter file
		legacyOIDC     string // the Runtime's spec.shoot.kubernetes.kubeAPIServer.oidcConfig; KEB sends {}
		noAdditional   bool   // the Runtime has no additionalOidcConfig (KEB before March 2025)
		previous       string // the ConfigMap data the previous manager wrote
		changed        bool   // the landscape chose to change it
	}{
		{reason: "KEB-shaped Runtime, operator prefix '-' stays a literal dash", usernamePrefix: "-", legacyOIDC: `{}`, previous: previousOperatorDash},
		{reason: "KEB-shaped Runtime, operator prefix kcp-op:", usernamePrefix: "kcp-op:", legacyOIDC: `{}`, previous: previousOperatorPrefixed},
		{reason: "Runtime of KEB before March 2025: its legacy issuer is the API server's, not the operator's",
			usernamePrefix: "-", legacyOIDC: oldKEBOIDC, noAdditional: true, previous: previousLegacy},
		{reason: "a legacy issuer without groups claim keeps its groups mapping", usernamePrefix: "-",
			legacyOIDC: `{"clientID": "c", "issuerURL": "https://i.example.com", "usernameClaim": "email", "usernamePrefix": "", "groupsPrefix": "g:"}`,
			previous:   previousNoGroupsClaim},
		{reason: "a landscape choosing this operator's rules: '-' means no prefix", usernamePrefix: "-", legacyOIDC: `{}`,
			document: "shoot:\n  authenticationStyle: kim\n", previous: previousOperatorDash, changed: true},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			cfg := previousLandscape(t, tc.usernamePrefix, tc.document)
			rt := kebRuntime(t, tc.legacyOIDC, tc.noAdditional)
			update := adoptedUpdate(t, rt, cfg)
			if update.Authentication == nil {
				t.Fatal("no structured authentication generated")
			}
			if got, want := update.Authentication.ConfigMapName, "structured-auth-config-"+rt.Spec.Shoot.Name; got != want {
				t.Errorf("ConfigMap %s, the adopted shoot references %s", got, want)
			}
			data, err := translate.AuthenticationConfigMapData(update.Authentication)
			if err != nil {
				t.Fatal(err)
			}
			live := map[string]string{translate.AuthenticationConfigKey: tc.previous}
			diffs, err := authenticationDifferences(update, live)
			if err != nil {
				t.Fatal(err)
			}
			if tc.changed {
				if data[translate.AuthenticationConfigKey] == tc.previous || len(diffs) == 0 {
					t.Errorf("the landscape chose this operator's rules, but the ConfigMap stays as the previous manager wrote it")
				}
				return
			}
			if diff := cmp.Diff(live, data); diff != "" {
				t.Errorf("the first write changes the ConfigMap data (-previous manager +written):\n%s", diff)
			}
			if len(diffs) != 0 {
				t.Errorf("kim migrate reports differences: %+v", diffs)
			}
		})
	}
}

// previousLandscape is the shoot configuration of the previous converter file (the test data of operator/config)
// with the given username prefix of its operator issuer, mapped as it is, and document next to it.
func previousLandscape(t *testing.T, usernamePrefix, document string) shoot.Config {
	t.Helper()
	dir := filepath.Join("..", "..", "operator", "config", "testdata", "previous")
	raw, err := os.ReadFile(filepath.Join(dir, "converter_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	doc["converter"].(map[string]any)["kubernetes"].(map[string]any)["defaultOperatorOidc"].(map[string]any)["usernamePrefix"] = usernamePrefix
	converter, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"/gardener/tenant/config": "audit-tenants.json", "/maintenance-window-config/config": "maintenance-windows.json"}
	read := func(path string) ([]byte, error) {
		if path == "/converter-config/converter_config.json" {
			return converter, nil
		}
		if f, ok := files[path]; ok {
			return os.ReadFile(filepath.Join(dir, f))
		}
		return nil, os.ErrNotExist
	}
	o, err := config.LoadConverterConfig("/converter-config/converter_config.json", read)
	if err != nil {
		t.Fatal(err)
	}
	var data []byte
	if document != "" {
		data = []byte("apiVersion: " + config.APIVersion + "\nkind: " + config.Kind + "\n" + document)
	}
	cfg, err := config.ParseOverlaid(data, o)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.ShootConfig()
}

// kebRuntime is the golden KEB Runtime of plan aws with the legacy oidcConfig given (JSON) and, when noAdditional,
// without additionalOidcConfig.
func kebRuntime(t *testing.T, legacyOIDC string, noAdditional bool) *imv1.Runtime {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "runtimes", "aws.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var rt imv1.Runtime
	if err := yaml.UnmarshalStrict(raw, &rt); err != nil {
		t.Fatal(err)
	}
	api := &rt.Spec.Shoot.Kubernetes.KubeAPIServer
	if api.AdditionalOidcConfig == nil || len(*api.AdditionalOidcConfig) == 0 {
		t.Fatal("the golden aws Runtime is not KEB-shaped: no additionalOidcConfig")
	}
	if err := json.Unmarshal([]byte(legacyOIDC), &api.OidcConfig); err != nil {
		t.Fatal(err)
	}
	if noAdditional {
		api.AdditionalOidcConfig = nil
	}
	return &rt
}

// adoptedUpdate is the first update this operator generates for rt's shoot as the previous manager left it: the
// shoot references its ConfigMap structured-auth-config-<shoot>.
func adoptedUpdate(t *testing.T, rt *imv1.Runtime, cfg shoot.Config) shoot.Spec {
	t.Helper()
	spec, err := shoot.Generate(mapping.Runtime(rt), cfg)
	if err != nil {
		t.Fatal(err)
	}
	live, err := translate.ToShoot(spec)
	if err != nil {
		t.Fatal(err)
	}
	live.Spec.Kubernetes.KubeAPIServer.StructuredAuthentication.ConfigMapName = shoot.LegacyAuthenticationConfigMapPrefix + rt.Spec.Shoot.Name
	cur, err := translate.CurrentFromShoot(live)
	if err != nil {
		t.Fatal(err)
	}
	update, err := shoot.GenerateUpdate(mapping.Runtime(rt), cfg, cur)
	if err != nil {
		t.Fatal(err)
	}
	return update
}
