package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The previous infrastructure manager's converter configuration (its --converter-config-filepath, a JSON file),
// described here as that manager reads it: a document with the sections "converter" and "cluster". Its decoder
// matches key names without regard to case and its values keep their meaning here, including what an absent key
// meant to it. Every key is listed, so that a key this operator does not know is an error, not a setting silently
// lost. Mapping: docs/operations/flags.md#the-converter-configuration.
type previousConfig struct {
	Converter previousConverter `json:"converter"`
	Cluster   struct {
		DefaultSharedIASTenant *previousOIDC `json:"defaultSharedIASTenant"`
	} `json:"cluster"`
}

type previousConverter struct {
	Kubernetes struct {
		KubeAPIServer struct {
			ACL struct {
				ConfigMapName string `json:"configMapName"`
			} `json:"acl"`
			MaxTokenExpiration string          `json:"maxTokenExpiration"`
			RuntimeConfig      map[string]bool `json:"runtimeConfig"`
			FeatureGates       map[string]bool `json:"featureGates"`
		} `json:"kubeApiServer"`
		Kubelet struct {
			FeatureGates map[string]bool `json:"featureGates"`
		} `json:"kubelet"`
		DefaultVersion                      string        `json:"defaultVersion"`
		EnableKubernetesVersionAutoUpdate   bool          `json:"enableKubernetesVersionAutoUpdate"`
		EnableMachineImageVersionAutoUpdate bool          `json:"enableMachineImageVersionAutoUpdate"`
		DefaultOperatorOidc                 *previousOIDC `json:"defaultOperatorOidc"`
	} `json:"kubernetes"`
	DNS struct {
		SecretName   string `json:"secretName"`
		DomainPrefix string `json:"domainPrefix"`
		ProviderType string `json:"providerType"`
	} `json:"dns"`
	Provider struct {
		AWS struct {
			EnableIMDSv2 bool `json:"enableIMDSv2"`
		} `json:"aws"`
		GDCH struct {
			CloudProfileName         string `json:"cloudProfileName"`
			ParentReferenceName      string `json:"parentReferenceName"`
			ParentReferenceNamespace string `json:"parentReferenceNamespace"`
			ParentReferenceType      string `json:"parentReferenceType"`
		} `json:"gdch"`
		Worker struct {
			DefaultMaxEvictRetries     string `json:"defaultMaxEvictRetries"`
			DefaultMachineDrainTimeout string `json:"defaultMachineDrainTimeout"`
		} `json:"worker"`
	} `json:"provider"`
	MachineImage struct {
		DefaultName    string `json:"defaultName"`
		DefaultVersion string `json:"defaultVersion"`
	} `json:"machineImage"`
	Gardener struct {
		ProjectName             string `json:"projectName"`
		EnableCredentialBinding bool   `json:"enableCredentialBinding"`
	} `json:"gardener"`
	AuditLogging struct {
		PolicyConfigMapName string `json:"policyConfigMapName"`
		TenantConfigPath    string `json:"tenantConfigPath"`
	} `json:"auditLogging"`
	MaintenanceWindow struct {
		WindowMapPath string `json:"windowMapPath"`
	} `json:"maintenanceWindow"`
	Tolerations map[string][]previousToleration `json:"tolerations"`
	Networking  struct {
		EnableDualStackIP bool `json:"enableDualStackIP"`
	} `json:"networking"`
}

// previousOIDC is an issuer in the previous configuration (all six keys were required there).
type previousOIDC struct {
	ClientID       string   `json:"clientID"`
	GroupsClaim    string   `json:"groupsClaim"`
	IssuerURL      string   `json:"issuerURL"`
	SigningAlgs    []string `json:"signingAlgs"`
	UsernameClaim  string   `json:"usernameClaim"`
	UsernamePrefix string   `json:"usernamePrefix"`
}

// previousToleration is a Gardener toleration as the previous configuration listed them per region.
type previousToleration struct {
	Key   string  `json:"key"`
	Value *string `json:"value"`
}

// previousAuditTenant is an entry of the previous audit log tenant file (auditLogging.tenantConfigPath):
// provider -> region -> tenant.
type previousAuditTenant struct {
	TenantID   string `json:"tenantID"`
	ServiceURL string `json:"serviceURL"`
	SecretName string `json:"secretName"`
	// ReadCredsSecretName had a meaning only for dedicated tenants, which come from AuditLog resources.
	ReadCredsSecretName string `json:"readCredsSecretName"`
}

// previousWindow is an entry of the previous maintenance window file (maintenanceWindow.windowMapPath): region ->
// window.
type previousWindow struct {
	Begin string `json:"begin"`
	End   string `json:"end"`
}

// Values the previous manager used where its configuration was silent.
const (
	previousDrainTimeout = "15m"
	previousEvictRetries = 2
	previousACLNamespace = "kcp-system" // where it read the ACL ConfigMap (its control plane namespace)
	// previousGDCHCloudProfile is the cloud profile the previous manager gave GDCH shoots when its file named none.
	previousGDCHCloudProfile = "cat"
)

// previousDualStackProviders are the providers the previous manager gave dual-stack networking when it was on.
var previousDualStackProviders = []string{"aws", "gcp"}

// LoadConverterConfig reads the previous infrastructure manager's converter configuration at path, and the audit
// log tenant and maintenance window files it names, through readFile, and maps every key to this operator's
// configuration. A key it cannot map (unknown to the previous manager, or a value this operator cannot represent)
// is an error naming the key; the returned overlay is merged into the configuration by ParseOverlaid.
func LoadConverterConfig(path string, readFile func(string) ([]byte, error)) (*Overlay, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the previous converter configuration: %w", err)
	}
	o, err := mapConverterConfig(path, data, readFile)
	if err != nil {
		return nil, fmt.Errorf("previous converter configuration %s: %w", path, err)
	}
	return o, nil
}

func mapConverterConfig(path string, data []byte, readFile func(string) ([]byte, error)) (*Overlay, error) {
	var raw any
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if err := duplicateJSONKeys(data); err != nil {
		return nil, err
	}
	if err := unknownKeys(raw, reflect.TypeOf(previousConfig{}), ""); err != nil {
		return nil, err
	}
	var p previousConfig
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, decodeError(err)
	}
	m := &converterMapper{file: path, o: &Overlay{}, readFile: readFile}
	m.mapConverter(p)
	return m.o, errors.Join(m.errs...)
}

type converterMapper struct {
	file     string
	o        *Overlay
	readFile func(string) ([]byte, error)
	errs     []error
}

func (m *converterMapper) origin(key string) string { return key + " of " + m.file }

// set states value for the configuration key at path, from the previous key from.
func (m *converterMapper) set(from string, value any, path ...string) {
	m.o.State(m.origin(from), value, path...)
}

// setString states a non-empty string; empty meant "not configured" to the previous manager.
func (m *converterMapper) setString(from, value string, path ...string) {
	if value != "" {
		m.set(from, value, path...)
	}
}

func (m *converterMapper) bad(key, format string, args ...any) {
	m.errs = append(m.errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
}

func (m *converterMapper) mapConverter(p previousConfig) {
	c := p.Converter
	k := c.Kubernetes
	m.setString("converter.kubernetes.defaultVersion", k.DefaultVersion, "shoot", "defaultKubernetesVersion")
	// Absent meant false to the previous manager (no auto-update), unlike this operator's default (true).
	m.set("converter.kubernetes.enableKubernetesVersionAutoUpdate", k.EnableKubernetesVersionAutoUpdate,
		"shoot", "maintenance", "autoUpdateKubernetesVersion")
	m.set("converter.kubernetes.enableMachineImageVersionAutoUpdate", k.EnableMachineImageVersionAutoUpdate,
		"shoot", "maintenance", "autoUpdateMachineImageVersion")
	if o := k.DefaultOperatorOidc; o != nil {
		// The previous manager gave the shoot's API server this issuer (unless the Runtime named one in the
		// legacy oidcConfig), its prefixes written as they are. Its rules stay unless the document chooses
		// this operator's, so the structured authentication ConfigMaps of adopted shoots stay as they are.
		m.set("converter.kubernetes.defaultOperatorOidc", []any{oidcValue(*o)}, "shoot", "operatorOIDC")
		m.o.Default(m.origin("converter.kubernetes.defaultOperatorOidc"), AuthenticationStylePrevious, "shoot", "authenticationStyle")
	}
	api := k.KubeAPIServer
	if name := api.ACL.ConfigMapName; name != "" {
		m.set("converter.kubernetes.kubeApiServer.acl.configMapName", name, "shoot", "acl", "configMap", "name")
		m.set("converter.kubernetes.kubeApiServer.acl.configMapName", previousACLNamespace, "shoot", "acl", "configMap", "namespace")
	}
	if v := api.MaxTokenExpiration; v != "" {
		if _, err := time.ParseDuration(v); err != nil {
			m.bad("converter.kubernetes.kubeApiServer.maxTokenExpiration", "%q is not a duration like 720h", v)
		} else {
			m.set("converter.kubernetes.kubeApiServer.maxTokenExpiration", v, "shoot", "kubeAPIServer", "maxTokenExpiration")
		}
	}
	for _, name := range sortedKeys(api.RuntimeConfig) {
		m.set("converter.kubernetes.kubeApiServer.runtimeConfig."+name, api.RuntimeConfig[name], "shoot", "kubeAPIServer", "runtimeConfig", name)
	}
	for _, name := range sortedKeys(api.FeatureGates) {
		m.set("converter.kubernetes.kubeApiServer.featureGates."+name, api.FeatureGates[name], "shoot", "kubeAPIServer", "featureGates", name)
	}
	for _, name := range sortedKeys(k.Kubelet.FeatureGates) {
		m.set("converter.kubernetes.kubelet.featureGates."+name, k.Kubelet.FeatureGates[name], "shoot", "kubelet", "featureGates", name)
	}

	dns := c.DNS
	if dns.SecretName == "" && dns.DomainPrefix == "" && dns.ProviderType == "" {
		// All three empty was the previous manager's way to ask for Gardener's internal domain.
		m.set("converter.dns", "internal", "shoot", "dns", "mode")
	}
	m.setString("converter.dns.secretName", dns.SecretName, "shoot", "dns", "secretName")
	m.setString("converter.dns.domainPrefix", dns.DomainPrefix, "shoot", "dns", "domainPrefix")
	m.setString("converter.dns.providerType", dns.ProviderType, "shoot", "dns", "providerType")

	pr := c.Provider
	m.set("converter.provider.aws.enableIMDSv2", pr.AWS.EnableIMDSv2, "shoot", "features", "awsIMDSv2")
	// Empty meant the previous manager's built-in profile name, not this operator's default.
	gdchProfile := pr.GDCH.CloudProfileName
	if gdchProfile == "" {
		gdchProfile = previousGDCHCloudProfile
	}
	m.set("converter.provider.gdch.cloudProfileName", gdchProfile, "shoot", "cloudProfiles", "gdch")
	m.setString("converter.provider.gdch.parentReferenceName", pr.GDCH.ParentReferenceName, "shoot", "gdch", "parentReference", "name")
	if pr.GDCH.ParentReferenceName != "" {
		// The previous manager gave every GDCH shoot egress; here it is opt-in.
		m.set("converter.provider.gdch.parentReferenceName", true, "shoot", "gdch", "enableEgress")
	}
	m.setString("converter.provider.gdch.parentReferenceNamespace", pr.GDCH.ParentReferenceNamespace, "shoot", "gdch", "parentReference", "namespace")
	m.setString("converter.provider.gdch.parentReferenceType", pr.GDCH.ParentReferenceType, "shoot", "gdch", "parentReference", "type")
	m.mapWorkers(pr.Worker.DefaultMachineDrainTimeout, pr.Worker.DefaultMaxEvictRetries)

	m.setString("converter.machineImage.defaultName", c.MachineImage.DefaultName, "shoot", "defaultMachineImage", "name")
	m.setString("converter.machineImage.defaultVersion", c.MachineImage.DefaultVersion, "shoot", "defaultMachineImage", "version")

	m.setString("converter.gardener.projectName", c.Gardener.ProjectName, "gardener", "project")
	if !c.Gardener.EnableCredentialBinding {
		m.bad("converter.gardener.enableCredentialBinding", "false (or absent) made the previous manager reference SecretBindings; "+
			"this operator always references CredentialsBindings (and moves existing shoots to them): create the "+
			"CredentialsBindings and set it to true")
	}

	m.mapAuditLog(c.AuditLogging.PolicyConfigMapName, c.AuditLogging.TenantConfigPath)
	m.mapWindows(c.MaintenanceWindow.WindowMapPath)
	m.mapTolerations(c.Tolerations)

	providers := []string{}
	if c.Networking.EnableDualStackIP {
		providers = previousDualStackProviders
	}
	m.set("converter.networking.enableDualStackIP", providers, "shoot", "dualStack", "providers")

	if o := p.Cluster.DefaultSharedIASTenant; o != nil {
		m.set("cluster.defaultSharedIASTenant", oidcValue(*o), "shoot", "oidc")
	}
}

// oidcValue is an issuer as the configuration's OIDCConfig; empty keys are left out.
func oidcValue(o previousOIDC) map[string]any {
	v := map[string]any{}
	for key, s := range map[string]string{"issuerURL": o.IssuerURL, "clientID": o.ClientID, "usernameClaim": o.UsernameClaim,
		"usernamePrefix": o.UsernamePrefix, "groupsClaim": o.GroupsClaim} {
		if s != "" {
			v[key] = s
		}
	}
	if len(o.SigningAlgs) > 0 {
		v["signingAlgs"] = o.SigningAlgs
	}
	return v
}

func (m *converterMapper) mapWorkers(drain, retries string) {
	const drainKey, retriesKey = "converter.provider.worker.defaultMachineDrainTimeout", "converter.provider.worker.defaultMaxEvictRetries"
	// Empty meant the previous manager's own defaults, which it wrote into every pool.
	if drain == "" {
		drain = previousDrainTimeout
	}
	if d, err := time.ParseDuration(drain); err != nil || d < 0 {
		m.bad(drainKey, "%q is not a duration like 15m", drain)
	} else {
		m.set(drainKey, drain, "shoot", "workers", "machineDrainTimeout")
	}
	n := int64(previousEvictRetries)
	if retries != "" {
		var err error
		if n, err = strconv.ParseInt(retries, 10, 32); err != nil || n < 0 {
			m.bad(retriesKey, "%q is not a number of retries", retries)
			return
		}
	}
	m.set(retriesKey, n, "shoot", "workers", "maxEvictRetries")
}

func (m *converterMapper) mapAuditLog(policy, tenantPath string) {
	m.setString("converter.auditLogging.policyConfigMapName", policy, "shoot", "auditLog", "policyConfigMapName")
	if tenantPath == "" {
		return
	}
	const key = "converter.auditLogging.tenantConfigPath"
	data, err := m.readFile(tenantPath)
	if err != nil {
		m.bad(key, "read the audit log tenants: %v", err)
		return
	}
	var tenants map[string]map[string]previousAuditTenant
	if err := json.Unmarshal(data, &tenants); err != nil {
		m.bad(key, "audit log tenants %s: %v", tenantPath, decodeError(err))
		return
	}
	if err := duplicateJSONKeys(data); err != nil {
		m.bad(key, "audit log tenants %s: %v", tenantPath, err)
		return
	}
	// The previous manager configured the audit log of every shoot it had a tenant for.
	m.set(key, true, "shoot", "auditLog", "enabled")
	for _, provider := range sortedKeys(tenants) {
		for _, region := range sortedKeys(tenants[provider]) {
			t := tenants[provider][region]
			at := tenantPath + ": " + provider + "." + region
			if t.SecretName == "" {
				// The previous manager refused such a file; here the tenant would fall back to another Secret.
				m.bad(key, "%s.secretName: must not be empty", at)
			}
			// Each tenant keeps its own credentials Secret, as the previous manager referenced it.
			m.o.State(at+" (from "+m.origin(key)+")", map[string]any{"tenantID": t.TenantID, "serviceURL": t.ServiceURL,
				"secretName": t.SecretName}, "shoot", "auditLog", "tenants", provider, region)
		}
	}
}

func (m *converterMapper) mapWindows(path string) {
	if path == "" {
		return
	}
	const key = "converter.maintenanceWindow.windowMapPath"
	data, err := m.readFile(path)
	if err != nil {
		m.bad(key, "read the maintenance windows: %v", err)
		return
	}
	var windows map[string]previousWindow
	if err := json.Unmarshal(data, &windows); err != nil {
		m.bad(key, "maintenance windows %s: %v", path, decodeError(err))
		return
	}
	if err := duplicateJSONKeys(data); err != nil {
		m.bad(key, "maintenance windows %s: %v", path, err)
		return
	}
	for _, region := range sortedKeys(windows) {
		w := windows[region]
		m.o.State(path+": "+region+" (from "+m.origin(key)+")", map[string]any{"begin": w.Begin, "end": w.End},
			"shoot", "maintenance", "windows", region)
	}
}

func (m *converterMapper) mapTolerations(regions map[string][]previousToleration) {
	const key = "converter.tolerations"
	// The table replaces this operator's default (me-central2): absent, the previous manager tolerated nothing.
	// Each entry is Gardener's toleration as the previous manager copied it into spec.tolerations.
	table := map[string][]any{}
	for _, region := range sortedKeys(regions) {
		list := []any{}
		for _, t := range regions[region] {
			entry := map[string]any{"key": t.Key}
			if t.Value != nil && *t.Value != "" {
				entry["value"] = *t.Value
			}
			list = append(list, entry)
		}
		table[region] = list
	}
	m.set(key, table, "shoot", "tolerations")
}

// unknownKeys reports the keys of the JSON value v that the type t does not have, as the previous manager's decoder
// matched them (exact name first, then without regard to case), with their full paths, sorted; and two keys that
// name the same field in different case (that decoder kept the last one).
func unknownKeys(v any, t reflect.Type, path string) error {
	var errs []string
	walkKeys(v, t, path, &errs)
	if len(errs) == 0 {
		return nil
	}
	sort.Strings(errs)
	out := make([]error, len(errs))
	for i, e := range errs {
		out[i] = errors.New(e)
	}
	return errors.Join(out...)
}

func walkKeys(v any, t reflect.Type, path string, errs *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return // a type error, reported by the decoder
		}
		given := map[string][]string{} // field -> the keys that name it
		for k, child := range obj {
			f, ok := fieldByJSONName(t, k)
			if !ok {
				*errs = append(*errs, join(k)+": unknown key of the previous converter configuration; it cannot be mapped")
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			given[name] = append(given[name], k)
			walkKeys(child, f.Type, join(f.Tag.Get("json")), errs)
		}
		for name, keys := range given {
			if len(keys) > 1 {
				sort.Strings(keys)
				*errs = append(*errs, fmt.Sprintf("%s: duplicate key (given as %q; the previous manager matched keys without regard to case)",
					join(name), keys))
			}
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return
		}
		for k, child := range obj {
			walkKeys(child, t.Elem(), join(k), errs)
		}
	case reflect.Slice:
		list, ok := v.([]any)
		if !ok {
			return
		}
		for i, child := range list {
			walkKeys(child, t.Elem(), fmt.Sprintf("%s[%d]", path, i), errs)
		}
	}
}

// fieldByJSONName finds the field encoding/json decodes key into: the exact name, else one equal without regard to
// case.
func fieldByJSONName(t reflect.Type, key string) (reflect.StructField, bool) {
	var folded *reflect.StructField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == key {
			return f, true
		}
		if folded == nil && strings.EqualFold(name, key) {
			folded = &f
		}
	}
	if folded != nil {
		return *folded, true
	}
	return reflect.StructField{}, false
}
