package shoot

import "testing"

func TestGenerateRejectsInvalidRuntimes(t *testing.T) {
	cases := []struct {
		reason string
		mutate func(*Runtime)
		want   Reason
		field  string
	}{
		{"nodes prefix too large", func(r *Runtime) { r.Networking.Nodes = "10.0.0.0/8" }, ReasonNodesPrefixOutOfRange, "spec.shoot.networking.nodes"},
		{"nine zones", func(r *Runtime) {
			r.Workers[0].Zones = zonesFor(AWS, 8)
			r.Workers[0].Maximum = 9
			r.Workers = append(r.Workers, Worker{Name: "w2", MachineType: "m", Maximum: 1, Zones: []string{"eu-west-1z"}})
		}, ReasonTooManyZones, "spec.shoot.provider.workers"},
		{"zone of another region", func(r *Runtime) { r.Workers[0].Zones = []string{"us-east-1a"} }, ReasonZoneNotInRegion, "spec.shoot.provider.workers[0].zones"},
		{"no zones", func(r *Runtime) { r.Workers[0].Zones = nil }, ReasonNoZones, "spec.shoot.provider.workers[0].zones"},
		{"azure zone 9", func(r *Runtime) { r.Provider = Azure; r.Workers[0].Zones = []string{"9"} }, ReasonZoneNotInRegion, "spec.shoot.provider.workers[0].zones"},
		{"duplicate pool", func(r *Runtime) { r.Workers = append(r.Workers, r.Workers[0]) }, ReasonDuplicateWorker, "spec.shoot.provider.additionalWorkers[0].name"},
		{"pool name too long", func(r *Runtime) { r.Workers[0].Name = "a-very-long-pool-name" }, ReasonInvalidWorker, "spec.shoot.provider.workers[0].name"},
		{"maximum below zones", func(r *Runtime) {
			r.Workers[0].Zones = zonesFor(AWS, 3)
			r.Workers[0].Maximum = 2
			r.Workers[0].Minimum = 1
		}, ReasonInvalidWorker, "spec.shoot.provider.workers[0].maximum"},
		{"surge and unavailable zero", func(r *Runtime) { r.Workers[0].MaxSurge = "0" }, ReasonInvalidWorker, "spec.shoot.provider.workers[0].maxUnavailable"},
		{"bad volume size", func(r *Runtime) { r.Workers[0].VolumeSize = "80GB" }, ReasonInvalidWorker, "spec.shoot.provider.workers[0].volume.size"},
		{"gdch without a configured parent network", func(r *Runtime) { r.Provider = GDCH }, ReasonInvalidConfig, "shoot.gdch.parentReference.name"},
		{"bad purpose", func(r *Runtime) { r.Purpose = "infrastructure" }, ReasonInvalidPurpose, "spec.shoot.purpose"},
		{"bad HA", func(r *Runtime) { r.HAFailureTolerance = "region" }, ReasonInvalidHighAvailability, "spec.shoot.controlPlane.highAvailability.failureTolerance.type"},
		{"no credentials binding", func(r *Runtime) { r.CredentialsBinding = "" }, ReasonMissingField, "spec.shoot.secretBindingName"},
		{"uppercase shoot name", func(r *Runtime) { r.Name = "Shoot" }, ReasonInvalidName, "spec.shoot.name"},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			rt := testRuntime(AWS)
			tc.mutate(&rt)
			_, err := Generate(rt, testConfig())
			ve := AsValidationError(err)
			if ve == nil {
				t.Fatalf("want *ValidationError %s, got %v", tc.want, err)
			}
			if ve.Reason != tc.want || ve.Field != tc.field || ve.Message == "" {
				t.Errorf("want %s at %s, got %s at %s: %s", tc.want, tc.field, ve.Reason, ve.Field, ve.Message)
			}
		})
	}
}

func TestGenerateEveryProvider(t *testing.T) {
	for _, p := range []Provider{AWS, Azure, GCP, OpenStack, Alicloud} {
		t.Run(string(p), func(t *testing.T) {
			s, err := Generate(testRuntime(p), testConfig())
			if err != nil {
				t.Fatal(err)
			}
			infra := s.Provider.Infrastructure
			set := 0
			for _, ok := range []bool{infra.AWS != nil, infra.Azure != nil, infra.GCP != nil, infra.OpenStack != nil, infra.Alicloud != nil} {
				if ok {
					set++
				}
			}
			if set != 1 || s.Provider.Type != p {
				t.Errorf("want exactly the %s infrastructure, got %+v", p, infra)
			}
		})
	}
}

func TestStepNamesAreUniqueAndCoverTheIssue(t *testing.T) {
	seen := map[string]bool{}
	for _, n := range StepNames() {
		if seen[n] {
			t.Errorf("step %s twice", n)
		}
		seen[n] = true
	}
	if len(seen) < 20 {
		t.Errorf("expected at least 20 steps, got %d", len(seen))
	}
}
