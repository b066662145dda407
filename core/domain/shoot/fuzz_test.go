package shoot

import (
	"net/netip"
	"strings"
	"testing"
)

// FuzzGenerate feeds arbitrary Runtime values to Generate and GenerateUpdate: they must never panic
// (generate turns a panic into an untyped error, which fails here), every failure must be a
// *ValidationError, and every success must satisfy the layout invariants.
func FuzzGenerate(f *testing.F) {
	f.Add("aws", "eu-west-1", "c-91f0e7a", "10.250.0.0/16", "10.96.0.0/13", "10.104.0.0/13", "1.33", "eu-west-1a,eu-west-1b", "m6i.large", int32(1), int32(3), "1", "0", "80Gi", "evaluation", "zone", "https://issuer.example.com", "10.0.0.0/8", "docker.io", false, "1.33.2", "eu-west-1b")
	f.Add("azure", "westeurope", "abc1234", "10.250.0.0/22", "", "", "1.34", "1,2,3", "Standard_D4", int32(0), int32(0), "", "", "", "production", "", "", "", "", true, "", "")
	f.Add("gcp", "europe-west3", "x", "10.0.0.0/24", "10.1.0.0/16", "10.0.0.0/8", "", "europe-west3-a", "n2", int32(2), int32(1), "10%", "200%", "1Gi", "", "node", "http://x", "bad", "Bad Host", true, "9.9", "")
	f.Add("gdch", "r", "n", "", "", "", "x", "", "", int32(-1), int32(-1), "-1", "x", "1", "infrastructure", "region", "", "", "", false, "", "")
	f.Fuzz(func(t *testing.T, provider, region, name, nodes, pods, services, version, zones, machine string,
		minimum, maximum int32, surge, unavailable, volume, purpose, ha, issuer, acl, upstream string,
		update bool, currentVersion, currentZones string) {
		rt := Runtime{
			ID: "id", Name: name, Region: region, Purpose: purpose, CredentialsBinding: "b",
			Provider: Provider(provider), KubernetesVersion: version, HAFailureTolerance: ha,
			Workers: []Worker{{
				Name: "cpu-worker-0", MachineType: machine, Minimum: minimum, Maximum: maximum,
				MaxSurge: surge, MaxUnavailable: unavailable, VolumeSize: volume, Zones: splitList(zones),
			}},
			Networking: Networking{Nodes: nodes, Pods: pods, Services: services},
			ACL:        splitList(acl),
		}
		if issuer != "" {
			rt.OIDC = []OIDC{{IssuerURL: issuer, ClientID: "c"}}
		}
		if upstream != "" {
			rt.RegistryCaches = []RegistryCache{{Upstream: upstream}}
		}
		cfg := testConfig()
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
	}
}
