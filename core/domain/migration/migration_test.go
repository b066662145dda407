package migration

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func kebLabels(runtimeID, shootName string) map[string]string {
	return map[string]string{
		LabelInstanceID: "instance-" + runtimeID, LabelRuntimeID: runtimeID, LabelBrokerPlanID: "plan-id", LabelBrokerPlanName: "aws",
		LabelGlobalAccountID: "ga", LabelSubaccountID: "sa", LabelShootName: shootName, LabelRegion: "eu-central-1", LabelProvider: "AWS",
	}
}

func kyma(runtimeID, shootName string) Kyma {
	return Kyma{Namespace: "kcp-system", Name: runtimeID, Labels: kebLabels(runtimeID, shootName)}
}

func reasons(ps []Problem) []Reason {
	var out []Reason
	for _, p := range ps {
		out = append(out, p.Reason)
	}
	return out
}

func TestMigrationMatch(t *testing.T) {
	ours := Shoot{Name: "s1", RuntimeID: "r1", CreatedBy: CreatedByInfrastructureManager}
	unlabelled := kyma("r9", "s9")
	unlabelled.Labels = nil
	for _, tc := range []struct {
		reason   string
		kymas    []Kyma
		shoots   []Shoot
		existing Existing
		// want is runtimeID -> problems' reasons; needs is runtimeID -> [GardenerCluster, Runtime].
		want  map[string][]Reason
		needs map[string][2]bool
	}{
		{reason: "a Kyma and the shoot created for it need a GardenerCluster and a Runtime",
			kymas: []Kyma{kyma("r1", "s1")}, shoots: []Shoot{ours},
			want: map[string][]Reason{"r1": nil}, needs: map[string][2]bool{"r1": {true, true}}},
		{reason: "the provisioner's shoot is matched the same way",
			kymas: []Kyma{kyma("r1", "s1")}, shoots: []Shoot{{Name: "s1", RuntimeID: "r1", CreatedBy: CreatedByProvisioner}},
			want: map[string][]Reason{"r1": nil}, needs: map[string][2]bool{"r1": {true, true}}},
		{reason: "an existing GardenerCluster (KEB's) is kept",
			kymas: []Kyma{kyma("r1", "s1")}, shoots: []Shoot{ours}, existing: Existing{GardenerClusters: map[string]bool{"kcp-system/r1": true}},
			want: map[string][]Reason{"r1": nil}, needs: map[string][2]bool{"r1": {false, true}}},
		{reason: "an existing Runtime needs nothing, whatever its shoot looks like now",
			kymas: []Kyma{kyma("r1", "s1")}, shoots: []Shoot{{Name: "s1", RuntimeID: "r1", Managed: true}},
			existing: Existing{Runtimes: map[string]bool{"kcp-system/r1": true}},
			want:     map[string][]Reason{"r1": nil}, needs: map[string][2]bool{"r1": {false, false}}},
		{reason: "a Kyma without labels is bad input",
			kymas: []Kyma{unlabelled}, want: map[string][]Reason{"r9": {ReasonLabelsMissing}}},
		{reason: "a shoot without a runtime ID is not taken for the Kyma's",
			kymas: []Kyma{kyma("r1", "s1")}, shoots: []Shoot{{Name: "s1"}},
			want: map[string][]Reason{"r1": {ReasonShootWithoutRuntimeID}}},
		{reason: "a shoot created for another runtime is ambiguous, and that runtime has no Kyma",
			kymas: []Kyma{kyma("r1", "s1")}, shoots: []Shoot{{Name: "s1", RuntimeID: "r2"}},
			want: map[string][]Reason{"r1": {ReasonAmbiguous}}},
		{reason: "two Kymas naming one shoot are both ambiguous",
			kymas: []Kyma{kyma("r1", "s1"), kyma("r2", "s1")}, shoots: []Shoot{ours},
			want: map[string][]Reason{"r1": {ReasonAmbiguous}, "r2": {ReasonAmbiguous, ReasonAmbiguous}}},
		{reason: "two shoots naming one runtime are ambiguous; the other shoot is listed without a Kyma",
			kymas: []Kyma{kyma("r1", "s1")}, shoots: []Shoot{ours, {Name: "s2", RuntimeID: "r1"}},
			want: map[string][]Reason{"r1": {ReasonAmbiguous, ReasonNoKyma}}},
		{reason: "a Kyma whose shoot does not exist",
			kymas: []Kyma{kyma("r1", "s1")}, want: map[string][]Reason{"r1": {ReasonShootMissing}}},
		{reason: "a shoot being deleted is not adopted",
			kymas: []Kyma{kyma("r1", "s1")}, shoots: []Shoot{{Name: "s1", RuntimeID: "r1", Deleting: true}},
			want: map[string][]Reason{"r1": {ReasonShootBeingDeleted}}},
		{reason: "the operator's shoot without a Runtime is never handed to a new one",
			kymas: []Kyma{kyma("r1", "s1")}, shoots: []Shoot{{Name: "s1", RuntimeID: "r1", Managed: true}},
			want: map[string][]Reason{"r1": {ReasonShootManaged}}},
		{reason: "a shoot of a runtime without a Kyma is listed; unrelated and own shoots are not",
			shoots: []Shoot{{Name: "s3", RuntimeID: "r3"}, {Name: "other"}, {Name: "own", RuntimeID: "r4", Managed: true}},
			want:   map[string][]Reason{"r3": {ReasonNoKyma}}},
		{reason: "a Kyma not named by its runtime ID is ambiguous",
			kymas: []Kyma{{Namespace: "kcp-system", Name: "x", Labels: kebLabels("r1", "s1")}}, shoots: []Shoot{ours},
			want: map[string][]Reason{"r1": {ReasonAmbiguous}}},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			got := Match(tc.kymas, tc.shoots, tc.existing)
			gotReasons := map[string][]Reason{}
			for _, c := range got {
				gotReasons[c.RuntimeID] = append(gotReasons[c.RuntimeID], reasons(c.Problems)...)
				if want, ok := tc.needs[c.RuntimeID]; ok && (c.NeedsGardenerCluster != want[0] || c.NeedsRuntime != want[1]) {
					t.Errorf("%s needs GardenerCluster %t, Runtime %t; want %v", c.RuntimeID, c.NeedsGardenerCluster, c.NeedsRuntime, want)
				}
			}
			for id := range gotReasons {
				slices.Sort(gotReasons[id])
			}
			for id := range tc.want {
				slices.Sort(tc.want[id])
			}
			if diff := cmp.Diff(tc.want, gotReasons); diff != "" {
				t.Errorf("problems by runtime (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMigrationReview(t *testing.T) {
	diffs := []Difference{
		{Path: CredentialsBindingPath, Want: "aws-legacy"},
		{Path: ".metadata.annotations.infrastructuremanager.kyma-project.io/licence-type", Want: "PARTNER"},
		{Path: ".metadata.labels.account", Want: "ga", Have: "old"},
		{Path: ".spec.kubernetes.kubeAPIServer.featureGates.MutatingAdmissionPolicy", Want: "true"},
		{Path: ".spec.provider.workers[name=cpu-worker-0].maximum", Want: "3", Have: "4"},
	}
	kinds := func(ds []Difference) []DifferenceKind {
		var out []DifferenceKind
		for _, d := range ds {
			out = append(out, d.Kind)
		}
		return out
	}
	for _, tc := range []struct {
		reason        string
		secretBinding string
		accept        []string
		want          []DifferenceKind
		blocked       bool
	}{
		{"only the credentials switch and metadata additions pass on their own", "aws-legacy", nil,
			[]DifferenceKind{CredentialsSwitch, MetadataAddition, Blocking, Blocking, Blocking}, true},
		{"a credentials binding change without a SecretBinding blocks", "", nil,
			[]DifferenceKind{Blocking, MetadataAddition, Blocking, Blocking, Blocking}, true},
		{"accepted prefixes for every runtime", "aws-legacy", []string{"metadata.labels", ".spec.kubernetes", "spec.provider.workers"},
			[]DifferenceKind{CredentialsSwitch, MetadataAddition, Accepted, Accepted, Accepted}, false},
		{"an acceptance for another runtime does not count", "aws-legacy", []string{"r2:spec", "shoot-2:metadata"},
			[]DifferenceKind{CredentialsSwitch, MetadataAddition, Blocking, Blocking, Blocking}, true},
		{"an acceptance names the runtime by ID or shoot", "aws-legacy", []string{"r1:spec", "s1:metadata.labels.account"},
			[]DifferenceKind{CredentialsSwitch, MetadataAddition, Accepted, Accepted, Accepted}, false},
		{"a prefix must end at a path element", "aws-legacy", []string{"spec.kubernetes.kubeAPIServer.feature", ".spec.provider.workers[name=cpu-worker-0].max", "metadata.labels.acc"},
			[]DifferenceKind{CredentialsSwitch, MetadataAddition, Blocking, Blocking, Blocking}, true},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			var accept []Acceptance
			for _, a := range tc.accept {
				accept = append(accept, ParseAcceptance(a))
			}
			got, blocked := Review("r1", "s1", tc.secretBinding, diffs, accept)
			if !slices.Equal(kinds(got), tc.want) || blocked != tc.blocked {
				t.Errorf("kinds %v blocked %t; want %v, %t", kinds(got), blocked, tc.want, tc.blocked)
			}
		})
	}
}

// TestMigrationReviewGeneration: the new generation the gardener-apiserver reports follows from the changes: it is
// accepted with them, never on its own (a write that only re-serialises starts a reconcile nobody asked for).
func TestMigrationReviewGeneration(t *testing.T) {
	kubelet := Difference{Path: ".spec.kubernetes.kubelet.featureGates", Want: `{"A":true}`}
	gen := Difference{Path: GenerationPath, Want: "3", Have: "2"}
	other := Difference{Path: ".spec.provider.workers[name=cpu-worker-0].maximum", Want: "3", Have: "4"}
	for _, tc := range []struct {
		reason  string
		diffs   []Difference
		accept  []string
		binding string
		blocked bool
	}{
		{"with an accepted change", []Difference{kubelet, gen}, []string{"r1:spec.kubernetes.kubelet"}, "", false},
		{"with the expected binding switch", []Difference{{Path: CredentialsBindingPath, Want: "sb"}, gen}, nil, "sb", false},
		{"alone", []Difference{gen}, nil, "", true},
		{"with another blocking change", []Difference{kubelet, other, gen}, []string{"r1:spec.kubernetes.kubelet"}, "", true},
		{"with nothing accepted", []Difference{kubelet, gen}, nil, "", true},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			var accept []Acceptance
			for _, a := range tc.accept {
				accept = append(accept, ParseAcceptance(a))
			}
			got, blocked := Review("r1", "s1", tc.binding, tc.diffs, accept)
			if blocked != tc.blocked {
				t.Errorf("blocked %t, want %t: %+v", blocked, tc.blocked, got)
			}
		})
	}
}

// TestMigrationMatchApproval: an existing Runtime whose shoot the operator never took over waits for an approval of
// its first apply (adopt-only mode); one taken over, or being deleted, or of another runtime, does not.
func TestMigrationMatchApproval(t *testing.T) {
	rt := Existing{Runtimes: map[string]bool{"kcp-system/r1": true}}
	for _, tc := range []struct {
		reason string
		shoot  Shoot
		want   bool
	}{
		{"adopted, never applied", Shoot{Name: "s1", RuntimeID: "r1", Managed: true}, true},
		{"not adopted yet (the operator adopts it itself)", Shoot{Name: "s1", RuntimeID: "r1", CreatedBy: CreatedByInfrastructureManager}, true},
		{"taken over", Shoot{Name: "s1", RuntimeID: "r1", Managed: true, TakenOver: true}, false},
		{"being deleted", Shoot{Name: "s1", RuntimeID: "r1", Managed: true, Deleting: true}, false},
		{"of another runtime", Shoot{Name: "s1", RuntimeID: "r2", Managed: true}, false},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			cs := Match([]Kyma{kyma("r1", "s1")}, []Shoot{tc.shoot}, rt)
			if len(cs) == 0 || cs[0].NeedsApproval != tc.want || cs[0].NeedsRuntime || cs[0].NeedsGardenerCluster {
				t.Errorf("candidates %+v; want NeedsApproval %v and nothing to create", cs, tc.want)
			}
		})
	}
}

func TestMigrationDecide(t *testing.T) {
	c := Candidate{Namespace: "kcp-system", RuntimeID: "r1", ShootName: "s1", NeedsGardenerCluster: true, NeedsRuntime: true}
	actions := func(it Item) []ActionKind {
		var out []ActionKind
		for _, a := range it.Actions {
			out = append(out, a.Kind)
		}
		return out
	}
	bad := Problem{Reason: ReasonAmbiguous, Message: "x"}
	approval := Candidate{Namespace: "kcp-system", RuntimeID: "r1", ShootName: "s1", NeedsApproval: true}
	for _, tc := range []struct {
		reason  string
		facts   Facts
		outcome Outcome
		actions []ActionKind
	}{
		{"everything missing is planned", Facts{Candidate: c}, OutcomePlanned, []ActionKind{CreateGardenerCluster, CreateRuntime}},
		{"a SecretBinding adds the operator's switch", Facts{Candidate: c, SecretBinding: "sb"}, OutcomePlanned,
			[]ActionKind{CreateGardenerCluster, CreateRuntime, SwitchCredentialsBinding}},
		{"bad input writes nothing", Facts{Candidate: func() Candidate { b := c; b.Problems = []Problem{bad}; return b }()}, OutcomeSkipped, nil},
		{"an access problem writes nothing", Facts{Candidate: c, AccessProblems: []Problem{bad}}, OutcomeSkipped, nil},
		{"blocking differences refuse the Runtime, not the GardenerCluster", Facts{Candidate: c, Blocked: true}, OutcomeRefused,
			[]ActionKind{CreateGardenerCluster}},
		{"a Runtime problem refuses the Runtime", Facts{Candidate: c, RuntimeProblems: []Problem{bad}}, OutcomeRefused, []ActionKind{CreateGardenerCluster}},
		{"an existing Runtime: already migrated", Facts{Candidate: Candidate{RuntimeID: "r1"}}, OutcomeMigrated, nil},
		{"only a GardenerCluster missing", Facts{Candidate: func() Candidate { b := c; b.NeedsRuntime = false; return b }()}, OutcomePlanned,
			[]ActionKind{CreateGardenerCluster}},
		{"an existing Runtime whose takeover changes an accepted value: approved", Facts{Candidate: approval,
			Differences: []Difference{{Path: ".spec.x", Kind: Accepted}, {Path: ".metadata.labels.a", Kind: MetadataAddition}}}, OutcomePlanned, []ActionKind{ApproveTakeover}},
		{"an existing Runtime whose takeover adds only labels: the operator takes it over alone", Facts{Candidate: approval,
			Differences: []Difference{{Path: ".metadata.labels.a", Kind: MetadataAddition}}}, OutcomeMigrated, nil},
		{"an existing Runtime whose takeover is blocked: refused, nothing approved", Facts{Candidate: approval, Blocked: true,
			Differences: []Difference{{Path: ".spec.x", Kind: Blocking}}}, OutcomeRefused, nil},
		{"an existing Runtime with a problem: refused", Facts{Candidate: approval, RuntimeProblems: []Problem{bad},
			Differences: []Difference{{Path: ".spec.x", Kind: Accepted}}}, OutcomeRefused, nil},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			it := Decide(tc.facts)
			if it.Outcome != tc.outcome || !slices.Equal(actions(it), tc.actions) {
				t.Errorf("outcome %s actions %v; want %s %v (problems %v)", it.Outcome, actions(it), tc.outcome, tc.actions, it.Problems)
			}
		})
	}
	s := Summarize([]Item{Decide(Facts{Candidate: c, SecretBinding: "sb"}), Decide(Facts{Candidate: c, Blocked: true}),
		{Outcome: OutcomeSkipped}, {Outcome: OutcomeMigrated},
		Decide(Facts{Candidate: approval, Differences: []Difference{{Path: ".spec.x", Kind: Accepted}}})})
	want := Summary{Runtimes: 5, AlreadyMigrated: 1, GardenerClusters: 2, RuntimesCreated: 1, CredentialsBindingSwitch: 1, Skipped: 1, Refused: 1,
		TakeoversApproved: 1}
	if s != want {
		t.Errorf("summary %+v, want %+v", s, want)
	}
}
