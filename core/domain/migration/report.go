package migration

import "fmt"

// Reason is a stable cause of a runtime not being (fully) migrated; reports are read by scripts.
type Reason string

// Reasons of problems.
const (
	ReasonLabelsMissing         Reason = "LabelsMissing"
	ReasonAmbiguous             Reason = "Ambiguous"
	ReasonShootMissing          Reason = "ShootMissing"
	ReasonShootWithoutRuntimeID Reason = "ShootWithoutRuntimeID"
	ReasonShootBeingDeleted     Reason = "ShootBeingDeleted"
	ReasonShootManaged          Reason = "ShootManagedWithoutRuntime"
	ReasonNoKyma                Reason = "NoKymaResource"
	// ReasonNotExpressible: the shoot has settings a Runtime cannot express; generating it again would lose them.
	ReasonNotExpressible Reason = "NotExpressibleAsRuntime"
	// ReasonAdministratorsUnknown: the administrators could not be read from the runtime; a Runtime without them
	// would remove the administrators' access.
	ReasonAdministratorsUnknown Reason = "AdministratorsUnknown"
	ReasonSecretNotOwned        Reason = "SecretNotOwned"
	ReasonCredentialsBinding    Reason = "CredentialsBindingMissing"
	// ReasonDifferences: adopting would change the shoot in paths nobody accepted.
	ReasonDifferences Reason = "DifferencesNotAccepted"
)

// Problem is why something is not written.
type Problem struct {
	Reason  Reason `json:"reason"`
	Message string `json:"message"`
}

// ActionKind is something migration writes, or the operator does afterwards.
type ActionKind string

// Actions.
const (
	CreateGardenerCluster ActionKind = "CreateGardenerCluster"
	CreateRuntime         ActionKind = "CreateRuntime"
	// SwitchCredentialsBinding is done by the operator after it adopted the shoot; migration only reports it.
	SwitchCredentialsBinding ActionKind = "SwitchCredentialsBinding"
	// ApproveTakeover approves, for an existing Runtime, the operator's first apply to the shoot it adopted (the
	// Runtime's force-patch annotation): every difference it makes was reviewed (expected or accepted).
	ApproveTakeover ActionKind = "ApproveTakeover"
)

// Action is one step of a runtime's migration.
type Action struct {
	Kind   ActionKind `json:"kind"`
	Object string     `json:"object"`
	// ByOperator: the operator performs it (migration does not write it).
	ByOperator bool `json:"byOperator,omitempty"`
	// Done is set when --apply performed it; Error when it failed.
	Done  bool   `json:"done,omitempty"`
	Error string `json:"error,omitempty"`
}

// Outcome of a runtime.
type Outcome string

// Outcomes.
const (
	// OutcomeMigrated: a Runtime exists already; nothing to do.
	OutcomeMigrated Outcome = "AlreadyMigrated"
	// OutcomePlanned: actions would be taken (dry run); OutcomeDone: they were.
	OutcomePlanned Outcome = "Planned"
	OutcomeDone    Outcome = "Done"
	// OutcomeSkipped: bad input; nothing is written for the runtime.
	OutcomeSkipped Outcome = "Skipped"
	// OutcomeRefused: adopting would change the shoot; the Runtime is not created (its GardenerCluster may be, so its
	// kubeconfig keeps being rotated).
	OutcomeRefused Outcome = "Refused"
	// OutcomeFailed: a write failed; running again retries it.
	OutcomeFailed Outcome = "Failed"
)

// Item is the report of one runtime (or of a shoot without one).
type Item struct {
	RuntimeID   string       `json:"runtimeID"`
	Namespace   string       `json:"namespace,omitempty"`
	Shoot       string       `json:"shoot,omitempty"`
	CreatedBy   string       `json:"createdBy,omitempty"`
	Outcome     Outcome      `json:"outcome"`
	Actions     []Action     `json:"actions,omitempty"`
	Problems    []Problem    `json:"problems,omitempty"`
	Differences []Difference `json:"differences,omitempty"`
	// VerifiedBy says how the differences were found: "server-side dry-run" or "comparison".
	VerifiedBy string `json:"verifiedBy,omitempty"`
}

// Facts are what the caller found out about a candidate beyond Match.
type Facts struct {
	Candidate Candidate
	// AccessProblems block everything (e.g. a Secret that belongs to someone else).
	AccessProblems []Problem
	// RuntimeProblems block only the Runtime (e.g. a shoot a Runtime cannot express, unknown administrators).
	RuntimeProblems []Problem
	// SecretBinding is the SecretBinding the shoot still uses ("" when none).
	SecretBinding string
	// Differences are Review's result; Blocked whether one still blocks.
	Differences []Difference
	Blocked     bool
	VerifiedBy  string
}

// Decide turns the facts of one runtime into its report item: what is written (as actions, not done yet) and why
// something is not. Bad input (Match's or access problems) writes nothing; a Runtime that cannot be faithful or
// would change the shoot is refused while its GardenerCluster is still created.
func Decide(f Facts) Item {
	c := f.Candidate
	it := Item{RuntimeID: c.RuntimeID, Namespace: c.Namespace, Shoot: c.ShootName, CreatedBy: c.CreatedBy,
		Differences: f.Differences, VerifiedBy: f.VerifiedBy}
	if bad := append(append([]Problem{}, c.Problems...), f.AccessProblems...); len(bad) > 0 {
		it.Outcome, it.Problems = OutcomeSkipped, bad
		return it
	}
	if !c.NeedsRuntime && !c.NeedsGardenerCluster {
		if c.NeedsApproval {
			return decideApproval(f, it)
		}
		it.Outcome = OutcomeMigrated
		return it
	}
	if c.NeedsGardenerCluster {
		it.Actions = append(it.Actions, Action{Kind: CreateGardenerCluster, Object: "GardenerCluster " + c.Key()})
	}
	if !c.NeedsRuntime {
		it.Outcome = OutcomePlanned
		return it
	}
	it.Problems = append(it.Problems, f.RuntimeProblems...)
	if f.Blocked {
		it.Problems = append(it.Problems, problem(ReasonDifferences, "adopting shoot %s with the Runtime generated from it would change it "+
			"(differences of kind %q); fix the operator configuration or the shoot, or accept the paths with --accept", c.ShootName, Blocking))
	}
	if len(it.Problems) > 0 {
		it.Outcome = OutcomeRefused
		return it
	}
	it.Actions = append(it.Actions, Action{Kind: CreateRuntime, Object: "Runtime " + c.Key()})
	if f.SecretBinding != "" {
		it.Actions = append(it.Actions, Action{Kind: SwitchCredentialsBinding, ByOperator: true,
			Object: fmt.Sprintf("shoot %s: SecretBinding %s -> CredentialsBinding %s", c.ShootName, f.SecretBinding, f.SecretBinding)})
	}
	it.Outcome = OutcomePlanned
	return it
}

// decideApproval decides on an existing Runtime whose shoot the operator has not taken over: the approval of its
// first apply is planned when nothing blocks and the apply changes more than labels and annotations (which the
// operator records without approval).
func decideApproval(f Facts, it Item) Item {
	c := f.Candidate
	it.Problems = append(it.Problems, f.RuntimeProblems...)
	if f.Blocked {
		it.Problems = append(it.Problems, problem(ReasonDifferences, "the operator's first apply to shoot %s for the existing Runtime would change it "+
			"(differences of kind %q) and waits for approval; fix the operator configuration, the Runtime or the shoot, or accept the paths with --accept", c.ShootName, Blocking))
	}
	if len(it.Problems) > 0 {
		it.Outcome = OutcomeRefused
		return it
	}
	for _, d := range f.Differences {
		if d.Kind != MetadataAddition {
			it.Actions = append(it.Actions, Action{Kind: ApproveTakeover, Object: "Runtime " + c.Key()})
			it.Outcome = OutcomePlanned
			return it
		}
	}
	it.Outcome = OutcomeMigrated
	return it
}

// Summary counts a report's items and actions.
type Summary struct {
	Runtimes                 int `json:"runtimes"`
	AlreadyMigrated          int `json:"alreadyMigrated"`
	GardenerClusters         int `json:"gardenerClusters"`
	RuntimesCreated          int `json:"runtimesCreated"`
	CredentialsBindingSwitch int `json:"credentialsBindingSwitches"`
	TakeoversApproved        int `json:"takeoversApproved"`
	Skipped                  int `json:"skipped"`
	Refused                  int `json:"refused"`
	Failed                   int `json:"failed"`
}

// Summarize counts items by outcome and the GardenerClusters and Runtimes planned (dry run) or created (apply).
func Summarize(items []Item) Summary {
	var s Summary
	s.Runtimes = len(items)
	for _, it := range items {
		switch it.Outcome {
		case OutcomeMigrated:
			s.AlreadyMigrated++
		case OutcomeSkipped:
			s.Skipped++
		case OutcomeRefused:
			s.Refused++
		case OutcomeFailed:
			s.Failed++
		}
		for _, a := range it.Actions {
			if a.Error != "" {
				continue
			}
			switch a.Kind {
			case CreateGardenerCluster:
				s.GardenerClusters++
			case CreateRuntime:
				s.RuntimesCreated++
			case SwitchCredentialsBinding:
				s.CredentialsBindingSwitch++
			case ApproveTakeover:
				s.TakeoversApproved++
			}
		}
	}
	return s
}

// Report is what kim migrate prints and writes as JSON.
type Report struct {
	DryRun          bool    `json:"dryRun"`
	Namespace       string  `json:"namespace"`
	GardenNamespace string  `json:"gardenNamespace"`
	Items           []Item  `json:"items"`
	Summary         Summary `json:"summary"`
	// Interrupted: the run was stopped (Ctrl-C) before it examined or applied every runtime; Items holds only
	// the runtimes it finished.
	Interrupted bool `json:"interrupted,omitempty"`
}
