package runtimeconfig

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/kyma-project/kim/core/domain/shoot"
)

func ptr(s string) *string { return &s }

// kebRuntime is a Runtime as KEB sends it, with two pools, two customer issuers (one with jwks, one with a CA
// bundle), an ACL and two administrators.
func kebRuntime() shoot.Runtime {
	return shoot.Runtime{
		ID: "4f3a1b2c-0d9e-4f8a-b7c6-5d4e3f2a1b0c", Generation: 3, GlobalAccountID: "ga-1", SubaccountID: "sa-1",
		Name: "c-4f3a1b2", PlatformRegion: "cf-eu10", Region: "eu-central-1", Provider: shoot.AWS,
		Workers: []shoot.Worker{
			{Name: "cpu-worker-0", MachineType: "m6i.large", Minimum: 3, Maximum: 20, Zones: []string{"eu-central-1a", "eu-central-1b", "eu-central-1c"}},
			{Name: "gpu", MachineType: "g5.xlarge", Minimum: 0, Maximum: 2, Zones: []string{"eu-central-1a"}},
		},
		Networking: shoot.Networking{Nodes: "10.250.0.0/16", Pods: "100.64.0.0/12", Services: "100.104.0.0/13"},
		ACL:        []string{"203.0.113.0/24"},
		OIDCGiven:  true,
		OIDC: []shoot.OIDC{
			{IssuerURL: "https://offline.example.com", ClientID: "app", UsernameClaim: "email", UsernamePrefix: ptr("-"),
				SigningAlgs: []string{"ES256"}, JWKS: []byte(`{"keys":[{"kty":"EC","kid":"k1"}]}`)},
			{IssuerURL: "https://private.example.com", ClientID: "app2", GroupsClaim: "groups", GroupsPrefix: ptr("acme:"),
				CABundle: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", RequiredClaims: map[string]string{"tenant": "acme"}},
		},
		Administrators: []string{"bob@example.com", "alice@example.com", "bob@example.com"},
	}
}

func kebFacts() Facts {
	return Facts{Runtime: kebRuntime(), InstanceID: "inst-1", InstanceName: "my-kyma", OIDCServed: true,
		Shoot: ShootFacts{SeedRegion: "eu-west-1", ReconciledAt: time.Date(2026, 11, 30, 10, 4, 5, 123, time.FixedZone("x", 3600)),
			Zones:                []Zone{{Name: "eu-central-1a", CIDRs: []string{"10.250.0.0/19", "10.250.32.0/20", "10.250.48.0/20"}}},
			InfrastructureConfig: []byte(awsInfrastructureConfig)}}
}

// awsInfrastructureConfig is the infrastructure config of the shoot of kebRuntime, as Gardener stores it.
const awsInfrastructureConfig = `{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","kind":"InfrastructureConfig",` +
	`"networks":{"vpc":{"cidr":"10.250.0.0/16"},"zones":[{"name":"eu-central-1a","workers":"10.250.0.0/19",` +
	`"public":"10.250.32.0/20","internal":"10.250.48.0/20"}]}}`

func TestProvisioningInfoDocument(t *testing.T) {
	d, err := Compute(kebFacts())
	if err != nil {
		t.Fatal(err)
	}
	// The document is a contract (docs/runtime-configuration.md): keys, order and formats are checked literally.
	want := `workerPools:
  kyma:
    name: cpu-worker-0
    machineType: m6i.large
    haZones: true
    autoScalerMin: 3
    autoScalerMax: 20
  custom:
    - name: gpu
      machineType: g5.xlarge
      haZones: false
      autoScalerMin: 0
      autoScalerMax: 2
globalAccountID: ga-1
subaccountID: sa-1
environmentInstanceID: inst-1
instanceID: inst-1
instanceName: my-kyma
runtimeID: 4f3a1b2c-0d9e-4f8a-b7c6-5d4e3f2a1b0c
shootName: c-4f3a1b2
provider: aws
region: eu-central-1
platformRegion: cf-eu10
seedRegion: eu-west-1
infrastructure:
  nodes: 10.250.0.0/16
  pods: 100.64.0.0/12
  services: 100.104.0.0/13
  zones:
    - name: eu-central-1a
      cidrs:
        - 10.250.0.0/19
        - 10.250.32.0/20
        - 10.250.48.0/20
infrastructureConfig:
  apiVersion: aws.provider.extensions.gardener.cloud/v1alpha1
  kind: InfrastructureConfig
  networks:
    vpc:
      cidr: 10.250.0.0/16
    zones:
      - internal: 10.250.48.0/20
        name: eu-central-1a
        public: 10.250.32.0/20
        workers: 10.250.0.0/19
networkDetails:
  dualStackIPEnabled: false
  kubeAPIServer:
    acl:
      - 203.0.113.0/24
lastReconcileTime: "2026-11-30T09:04:05Z"
`
	if diff := cmp.Diff(want, d.ProvisioningInfo); diff != "" {
		t.Errorf("document (-want +got):\n%s", diff)
	}
}

func TestProvisioningInfoOmitsWhatIsUnknown(t *testing.T) {
	f := kebFacts()
	f.Shoot = ShootFacts{DualStack: true}
	f.Runtime.Workers = f.Runtime.Workers[:1]
	f.Runtime.ACL, f.Runtime.PlatformRegion, f.InstanceName = nil, "", ""
	d, err := Compute(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, absent := range []string{"custom:", "seedRegion:", "lastReconcileTime:", "zones:", "acl:", "platformRegion:", "instanceName:",
		"infrastructureConfig:"} {
		if strings.Contains(d.ProvisioningInfo, absent) {
			t.Errorf("document has %q although the value is unknown:\n%s", absent, d.ProvisioningInfo)
		}
	}
	if !strings.Contains(d.ProvisioningInfo, "dualStackIPEnabled: true") {
		t.Errorf("dual stack not reported:\n%s", d.ProvisioningInfo)
	}
}

func TestHAZones(t *testing.T) {
	for zones, want := range map[int]bool{1: false, 2: false, 3: true, 4: false, 5: true} {
		if got := highAvailability(make([]string, zones)); got != want {
			t.Errorf("%d zones: haZones %v, want %v", zones, got, want)
		}
	}
}

func TestOIDCResources(t *testing.T) {
	d, err := Compute(kebFacts())
	if err != nil {
		t.Fatal(err)
	}
	rt := kebRuntime()
	want := []OIDCResource{
		{Name: "kyma-oidc-0", IssuerURL: "https://offline.example.com", ClientID: "app", UsernameClaim: "email", UsernamePrefix: ptr("-"),
			SupportedSigningAlgs: []string{"ES256"}, JWKS: rt.OIDC[0].JWKS},
		{Name: "kyma-oidc-1", IssuerURL: "https://private.example.com", ClientID: "app2", UsernameClaim: "sub", GroupsClaim: "groups",
			GroupsPrefix: ptr("acme:"), CABundle: rt.OIDC[1].CABundle, RequiredClaims: map[string]string{"tenant": "acme"}},
	}
	if diff := cmp.Diff(want, d.OIDC); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	t.Run("the default customer issuer when the Runtime lists none", func(t *testing.T) {
		f := kebFacts()
		f.Runtime.OIDC, f.Runtime.OIDCGiven = nil, false
		f.Config.DefaultOIDC = &shoot.OIDC{IssuerURL: "https://default.example.com", ClientID: "d"}
		d, _ := Compute(f)
		if len(d.OIDC) != 1 || d.OIDC[0].Name != "kyma-oidc-0" || d.OIDC[0].IssuerURL != "https://default.example.com" {
			t.Errorf("got %+v", d.OIDC)
		}
	})
	t.Run("an empty list: none, and the operator's resources are pruned", func(t *testing.T) {
		f := kebFacts()
		f.Runtime.OIDC = []shoot.OIDC{}
		d, _ := Compute(f)
		if !d.ManageOIDC || len(d.OIDC) != 0 {
			t.Errorf("manage %v, resources %+v", d.ManageOIDC, d.OIDC)
		}
	})
	t.Run("without shoot-oidc-service nothing is managed", func(t *testing.T) {
		f := kebFacts()
		f.OIDCServed = false
		d, _ := Compute(f)
		if d.ManageOIDC || len(d.OIDC) != 0 {
			t.Errorf("manage %v, resources %+v", d.ManageOIDC, d.OIDC)
		}
	})
}

func TestAdministrators(t *testing.T) {
	d, _ := Compute(kebFacts())
	want := []AdminBinding{{Name: AdminBindingName("alice@example.com"), User: "alice@example.com"},
		{Name: AdminBindingName("bob@example.com"), User: "bob@example.com"}}
	if want[0].Name > want[1].Name {
		want[0], want[1] = want[1], want[0]
	}
	if diff := cmp.Diff(want, d.Administrators); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if n := AdminBindingName("alice@example.com"); !strings.HasPrefix(n, "admin-") || len(n) != len("admin-")+16 || n == AdminBindingName("alice@example.co") {
		t.Errorf("binding name %q: want admin-<16 hex>, distinct per user", n)
	}
}

func TestHashFollowsEveryInput(t *testing.T) {
	base, _ := Compute(kebFacts())
	again, _ := Compute(kebFacts())
	if base.Hash() != again.Hash() || base.Hash() == "" {
		t.Fatalf("equal facts hash differently: %q %q", base.Hash(), again.Hash())
	}
	changes := map[string]func(*Facts){
		"pool maximum":   func(f *Facts) { f.Runtime.Workers[1].Maximum = 3 },
		"pool removed":   func(f *Facts) { f.Runtime.Workers = f.Runtime.Workers[:1] },
		"issuer removed": func(f *Facts) { f.Runtime.OIDC = f.Runtime.OIDC[:1] },
		"issuer jwks":    func(f *Facts) { f.Runtime.OIDC[0].JWKS = []byte(`{"keys":[{"kty":"EC","kid":"k2"}]}`) },
		"administrator":  func(f *Facts) { f.Runtime.Administrators = []string{"carol@example.com"} },
		"seed region":    func(f *Facts) { f.Shoot.SeedRegion = "eu-west-2" },
		"infrastructure config": func(f *Facts) {
			f.Shoot.InfrastructureConfig = []byte(strings.Replace(awsInfrastructureConfig, "10.250.0.0/16", "10.251.0.0/16", 1))
		},
		"shoot reconciled":   func(f *Facts) { f.Shoot.ReconciledAt = f.Shoot.ReconciledAt.Add(time.Hour) },
		"global account":     func(f *Facts) { f.Runtime.GlobalAccountID = "ga-2" },
		"extension removed":  func(f *Facts) { f.OIDCServed = false },
		"bootstrap manifest": func(f *Facts) { f.Bootstrap = &Bootstrap{Objects: []BootstrapObject{{Kind: "ConfigMap", Name: "x"}}} },
	}
	for name, change := range changes {
		f := kebFacts()
		change(&f)
		d, _ := Compute(f)
		if d.Hash() == base.Hash() {
			t.Errorf("%s: hash unchanged", name)
		}
	}
}

// KEB sends any strings as administrators (issue 26); empty names and names Kubernetes reserves for its own
// identities get no binding, and the outcome names them, so the rest of the runtime is configured.
func TestReservedAdministratorsGetNoBinding(t *testing.T) {
	f := kebFacts()
	f.Runtime.Administrators = []string{"alice@example.com", "", "system:anonymous", "system:unauthenticated", "system:anonymous", "systemic@example.com"}
	d, err := Compute(f)
	if err != nil {
		t.Fatal(err)
	}
	var users []string
	for _, b := range d.Administrators {
		users = append(users, b.User)
	}
	slices.Sort(users)
	if want := []string{"alice@example.com", "systemic@example.com"}; !slices.Equal(users, want) {
		t.Errorf("bound %v, want %v", users, want)
	}
	if want := []string{"", "system:anonymous", "system:unauthenticated"}; !slices.Equal(d.ReservedAdministrators, want) {
		t.Errorf("reserved %q, want %q", d.ReservedAdministrators, want)
	}
	if n := BoundAdministrators(f.Runtime.Administrators); n != 2 {
		t.Errorf("BoundAdministrators = %d, want 2", n)
	}
	o := AdministratorsOutcome(len(d.Administrators), d.ReservedAdministrators)
	if !o.Done || o.Reason != ReasonAdministratorNamesReserved || !strings.Contains(o.Message, `"system:anonymous"`) {
		t.Errorf("outcome %+v, want done, AdministratorNamesReserved, naming system:anonymous", o)
	}
	if o := AdministratorsOutcome(2, nil); o.Reason != ReasonAdministratorsConfigured {
		t.Errorf("outcome without reserved names: %+v", o)
	}
}

// dualStackIPEnabled tells components what the cluster has: a Runtime asking for dual-stack where the landscape does
// not offer it gets a single-stack cluster (issue 26), and the document must say so.
func TestProvisioningInfoReportsTheShootsIPFamilies(t *testing.T) {
	f := kebFacts()
	f.Runtime.Networking.DualStack = true
	for _, shootDual := range []bool{false, true} {
		f.Shoot.DualStack = shootDual
		if got := provisioningInfo(f).NetworkDetails.DualStackIPEnabled; got != shootDual {
			t.Errorf("shoot dual-stack %v: dualStackIPEnabled %v", shootDual, got)
		}
	}
}

// The document rendered in two parts (everything, then the reconcile time) is the one a single encoding of the
// whole document writes, for documents with and without the time and with values YAML must quote.
func TestRenderedInPartsIsRenderedAtOnce(t *testing.T) {
	omitted := kebFacts()
	omitted.Shoot = ShootFacts{}
	quoted := kebFacts()
	quoted.InstanceName, quoted.Runtime.GlobalAccountID = "yes", "- 'x': \"y\" #"
	quoted.Shoot.InfrastructureConfig = []byte(`{"a":"2026-01-01","b":"null","c":{"d":["on","0x1", ""]}}`)
	for name, f := range map[string]Facts{"keb": kebFacts(), "nothing known of the shoot": omitted, "quoted values": quoted} {
		p := provisioningInfo(f)
		var whole strings.Builder
		enc := yaml.NewEncoder(&whole)
		enc.SetIndent(2)
		if err := enc.Encode(p); err != nil {
			t.Fatal(err)
		}
		_ = enc.Close()
		got, err := p.Render()
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(whole.String(), got); diff != "" {
			t.Errorf("%s: rendered in parts (-at once +in parts):\n%s", name, diff)
		}
	}
}

// AtReconcileTime gives the state Compute gives for the same facts at that reconcile time, hash included, and the
// state of a zero time has no lastReconcileTime at all.
func TestAtReconcileTimeIsComputeAtThatTime(t *testing.T) {
	f := kebFacts()
	d, err := Compute(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []time.Time{{}, f.Shoot.ReconciledAt.Add(-time.Hour), f.Shoot.ReconciledAt, time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC)} {
		g := f
		g.Shoot.ReconciledAt = at
		want, err := Compute(g)
		if err != nil {
			t.Fatal(err)
		}
		got, err := d.AtReconcileTime(at)
		if err != nil {
			t.Fatal(err)
		}
		if got.ProvisioningInfo != want.ProvisioningInfo || got.Hash() != want.Hash() {
			t.Errorf("at %v: document\n%s\nwant\n%s", at, got.ProvisioningInfo, want.ProvisioningInfo)
		}
	}
	if _, err := (Desired{ProvisioningInfo: "x: y\n"}).AtReconcileTime(time.Now()); err == nil {
		t.Error("a desired state Compute did not make: want an error, not a document cut anywhere")
	}
}
