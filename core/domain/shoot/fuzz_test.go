package shoot

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
)

// FuzzGenerate feeds arbitrary Runtime values to Generate and GenerateUpdate: they must never panic
// (generate turns a panic into an untyped error, which fails here), every failure must be a
// *ValidationError, and every success must satisfy the layout invariants.
func FuzzGenerate(f *testing.F) {
	f.Add("aws", "eu-west-1", "c-91f0e7a", "10.250.0.0/16", "10.96.0.0/13", "10.104.0.0/13", "1.33", "eu-west-1a,eu-west-1b", "m6i.large", int32(1), int32(3), "1", "0", "80Gi", "evaluation", "zone", "https://issuer.example.com", "10.0.0.0/8", "docker.io", false, "1.33.2", "eu-west-1b",
		true, "net-raw=false", int32(300), true, []byte(nil), "10Gi", "external", "192.0.2.0/29", "")
	f.Add("azure", "westeurope", "abc1234", "10.250.0.0/22", "", "", "1.34", "1,2,3", "Standard_D4", int32(0), int32(0), "", "", "", "production", "", "", "", "", true, "", "",
		false, "", int32(0), false, []byte(nil), "", "internal", "", "")
	f.Add("gcp", "europe-west3", "x", "10.0.0.0/24", "10.1.0.0/16", "10.0.0.0/8", "", "europe-west3-a", "n2", int32(2), int32(1), "10%", "200%", "1Gi", "", "node", "http://x", "bad", "Bad Host", true, "9.9", "",
		true, "debug", int32(-5), true, []byte(`{"keys":[]}`), "1.5T", "magic", "x", "not pem")
	f.Add("gdch", "zone1", "n", "10.180.0.0/16", "10.96.0.0/13", "", "1.33", "zone1-a,zone1-b,zone1-c", "n2-standard-4-gdc", int32(1), int32(3), "1", "0", "50Gi", "production", "", "", "", "", false, "", "",
		false, "", int32(110), false, []byte(nil), "0", "off", "", "")
	f.Add("gdch", "r", "n", "", "", "", "x", "", "", int32(-1), int32(-1), "-1", "x", "1", "infrastructure", "region", "", "", "", true, "", "r1,r2",
		true, "=", int32(1<<30), true, []byte{0}, "-1Gi", "", "1.2.3.4/32,bad", "-----BEGIN CERTIFICATE-----")
	f.Fuzz(func(t *testing.T, provider, region, name, nodes, pods, services, version, zones, machine string,
		minimum, maximum int32, surge, unavailable, volume, purpose, ha, issuer, acl, upstream string,
		update bool, currentVersion, currentZones string,
		dualStack bool, gvisorFlags string, maxPods int32, oidcGiven bool, jwks []byte, cacheSize, dnsMode, controlPlane, caBundle string) {
		rt := Runtime{
			ID: "id", Name: name, Region: region, Purpose: purpose, CredentialsBinding: "b",
			Provider: Provider(provider), KubernetesVersion: version, HAFailureTolerance: ha,
			Workers: []Worker{{
				Name: "cpu-worker-0", MachineType: machine, Minimum: minimum, Maximum: maximum,
				MaxSurge: surge, MaxUnavailable: unavailable, VolumeSize: volume, Zones: splitList(zones),
			}},
			Networking: Networking{Nodes: nodes, Pods: pods, Services: services, DualStack: dualStack},
			ACL:        splitList(acl),
			OIDCGiven:  oidcGiven,
		}
		if gvisorFlags != "" {
			flags := map[string]string{}
			for _, kv := range splitList(gvisorFlags) {
				k, v, _ := strings.Cut(kv, "=")
				flags[k] = v
			}
			rt.Workers[0].ContainerRuntimes = []ContainerRuntime{{Type: ContainerRuntimeGVisor, ConfigFlags: flags}}
		}
		if maxPods != 0 {
			rt.Workers[0].MaxPods = &maxPods
		}
		if issuer != "" {
			rt.OIDC = []OIDC{{IssuerURL: issuer, ClientID: "c", JWKS: jwks, CABundle: caBundle}}
		}
		if upstream != "" {
			rt.RegistryCaches = []RegistryCache{{Upstream: upstream, VolumeSize: cacheSize}}
		}
		cfg := testConfig()
		cfg.DNS = DNSConfig{Mode: dnsMode, DomainPrefix: "kyma.example.com", SecretName: "s", ProviderType: "aws-route53"}
		if dnsMode == DNSModeInternal || dnsMode == DNSModeOff {
			cfg.DNS = DNSConfig{Mode: dnsMode}
		}
		cfg.ACL = ACLSettings{Enabled: true, ControlPlaneCIDRs: splitList(controlPlane)}
		cfg.DualStack = []Provider{AWS, GCP}
		cfg.GDCH = GDCHConfig{ParentReference: GDCHParentReference{Name: "net"}}
		cfg.Workers = WorkerDefaults{MachineDrainTimeout: "15m", MaxEvictRetries: &maximum}
		cfg.OperatorOIDC = []OIDC{{IssuerURL: "https://kcp.example.com", ClientID: "kim"}}
		var (
			spec Spec
			err  error
		)
		if update {
			cur := Current{KubernetesVersion: currentVersion, HasInfrastructureConfig: true,
				Workers: []CurrentWorker{{Name: "cpu-worker-0", ImageName: "gardenlinux", ImageVersion: currentVersion, Zones: splitList(currentZones)}}}
			// Existing zones own distinct subnets, as in a real shoot.
			for i, z := range splitList(currentZones) {
				if i == MaxZones {
					break
				}
				cidr := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 250, byte(32 * i), 0}), 19).String()
				cur.InfrastructureZones = append(cur.InfrastructureZones, CurrentZone{Name: z, CIDRs: []string{cidr}})
			}
			spec, err = GenerateUpdate(rt, cfg, cur)
		} else {
			spec, err = Generate(rt, cfg)
		}
		if err != nil {
			if AsValidationError(err) == nil {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		checkInvariants(t, spec)
		// An ACL never locks the control plane out: all its egress CIDRs are allowed.
		for _, e := range spec.Extensions {
			if c, ok := e.Config.(ACLConfig); ok {
				for _, cp := range cfg.ACL.ControlPlaneCIDRs {
					if p, err := netip.ParsePrefix(cp); err != nil || !slices.Contains(c.AllowedCIDRs, p.Masked().String()) {
						t.Fatalf("control plane CIDR %q missing from the ACL %v", cp, c.AllowedCIDRs)
					}
				}
			}
		}
	})
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func checkInvariants(t *testing.T, s Spec) {
	t.Helper()
	if len(zonesOf(s.Workers)) > MaxZones {
		t.Fatalf("more than %d zones accepted", MaxZones)
	}
	nodes, err := netip.ParsePrefix(s.Networking.Nodes)
	if err != nil || nodes.Bits() < MinNodesPrefixBits || nodes.Bits() > MaxNodesPrefixBits {
		t.Fatalf("invalid nodes CIDR accepted: %q", s.Networking.Nodes)
	}
	if aws := s.Provider.Infrastructure.AWS; aws != nil && !s.Provider.KeepInfrastructure {
		var seen []netip.Prefix
		for _, z := range aws.Zones {
			for _, c := range []string{z.Workers, z.Public, z.Internal} {
				p, err := netip.ParsePrefix(c)
				if err != nil {
					continue // kept from the current shoot
				}
				for _, q := range seen {
					if p.Overlaps(q) {
						t.Fatalf("subnets %s and %s overlap", p, q)
					}
				}
				seen = append(seen, p)
			}
		}
	}
	for _, w := range s.Workers {
		if w.Name == "" || w.MachineType == "" || w.Maximum < w.Minimum {
			t.Fatalf("invalid worker accepted: %+v", w)
		}
		if w.MaxPods != nil && (*w.MaxPods < 1 || *w.MaxPods > 254) {
			t.Fatalf("maxPods %d escaped the clamp", *w.MaxPods)
		}
		for _, cr := range w.ContainerRuntimes {
			if _, set := cr.ConfigFlags[GVisorNetRawFlag]; cr.Type == ContainerRuntimeGVisor && !set {
				t.Fatal("a gVisor runtime without net-raw")
			}
		}
	}
	if d := s.KubeAPIServer.MaxTokenExpiration; d < MinTokenExpiration || d > MaxTokenExpiration {
		t.Fatalf("token lifetime %s outside Gardener's bounds", d)
	}
	if len(s.Networking.IPFamilies) > 0 && s.Provider.Type != AWS && s.Provider.Type != GCP {
		t.Fatalf("dual stack accepted on %s", s.Provider.Type)
	}
	if a := s.Authentication; a != nil {
		if a.JWT[0].Issuer != "https://kcp.example.com" {
			t.Fatal("the operator's issuer is not the first authenticator")
		}
	}
	for _, e := range s.Extensions {
		if c, ok := e.Config.(ACLConfig); ok {
			if len(c.AllowedCIDRs) == 0 {
				t.Fatal("an ACL without CIDRs")
			}
		}
	}
	if g := s.Provider.Infrastructure.GDCH; g != nil {
		if len(g.Zones) < 1 || len(g.Zones) > 3 {
			t.Fatalf("gdch with %d zones", len(g.Zones))
		}
		var seen []netip.Prefix
		for _, z := range g.Zones {
			p, err := netip.ParsePrefix(z.CIDR)
			if err != nil || !nodes.Contains(p.Addr()) {
				continue // kept from the current shoot
			}
			for _, q := range seen {
				if p.Overlaps(q) {
					t.Fatalf("gdch subnets %s and %s overlap", p, q)
				}
			}
			seen = append(seen, p)
		}
	}
}
