package migration

import (
	"fmt"
	"sort"
)

// Kyma is a Kyma resource of KEB (operator.kyma-project.io Kyma), named by the runtime ID, as migration reads it.
type Kyma struct {
	Namespace, Name string
	Labels          map[string]string
}

// Shoot is a shoot of the Gardener project as migration reads it.
type Shoot struct {
	Name string
	// RuntimeID is the runtime the shoot's annotations name ("" when none); CreatedBy the system whose annotation it
	// is (Creator values).
	RuntimeID string
	CreatedBy string
	// Managed: the shoot carries this operator's managed-by mark (adopted or created by it).
	Managed bool
	// Deleting: Gardener is deleting the shoot.
	Deleting bool
	// TakenOver: this operator applied the shoot (or recorded its marks on it) at least once; an adopted shoot that
	// is not taken over gets its first apply only once a person approved it (adopt-only mode).
	TakenOver bool
}

// Creator values of Shoot.CreatedBy.
const (
	CreatedByInfrastructureManager = "infrastructure-manager"
	CreatedByProvisioner           = "provisioner"
)

// Existing is what exists already in KCP, by "namespace/name".
type Existing struct {
	GardenerClusters map[string]bool
	Runtimes         map[string]bool
}

// Candidate is one runtime matched with its shoot. A candidate with Problems is skipped as a whole; otherwise
// NeedsGardenerCluster and NeedsRuntime say what is missing (both false: already migrated).
type Candidate struct {
	Namespace, RuntimeID, ShootName string
	// Labels are the Kyma resource's labels: KEB's labels of the runtime, for the GardenerCluster and the Runtime.
	Labels    map[string]string
	CreatedBy string
	// NeedsGardenerCluster: no GardenerCluster exists for the runtime and no Runtime (whose controller would create
	// it). NeedsRuntime: no Runtime exists.
	NeedsGardenerCluster, NeedsRuntime bool
	// NeedsApproval: a Runtime exists, but the operator never took its shoot over: its first apply waits for a
	// person in the adopt-only mode, and migration reports (and with --apply approves) what it would change.
	NeedsApproval bool
	Problems      []Problem
}

// Key is namespace/runtimeID.
func (c Candidate) Key() string { return c.Namespace + "/" + c.RuntimeID }

// Match pairs every Kyma resource with the shoot its shoot-name label names and checks that the pair is
// unambiguous: the Kyma carries KEB's labels, its name is its runtime ID, no other Kyma claims the same runtime or
// shoot, and the shoot names the same runtime and is not being deleted. Shoots that name a runtime no Kyma resource
// has are returned as candidates with a problem too, so the report lists them. Runtimes that exist already need
// nothing (the operator manages them); a shoot the operator manages without a Runtime is never handed to a new one
// (its runtime was deleted: the shoot may be waiting for deletion).
func Match(kymas []Kyma, shoots []Shoot, existing Existing) []Candidate {
	byShoot := map[string]Shoot{}
	for _, s := range shoots {
		byShoot[s.Name] = s
	}
	claimsOfShoot, claimsOfRuntime, shootsOfRuntime := map[string]int{}, map[string]int{}, map[string][]string{}
	for _, s := range shoots {
		if s.RuntimeID != "" {
			shootsOfRuntime[s.RuntimeID] = append(shootsOfRuntime[s.RuntimeID], s.Name)
		}
	}
	for _, k := range kymas {
		claimsOfShoot[k.Labels[LabelShootName]]++
		claimsOfRuntime[k.Namespace+"/"+k.Labels[LabelRuntimeID]]++
	}
	var out []Candidate
	matchedShoots := map[string]bool{}
	for _, k := range kymas {
		c := Candidate{Namespace: k.Namespace, RuntimeID: k.Labels[LabelRuntimeID], ShootName: k.Labels[LabelShootName], Labels: k.Labels}
		if c.RuntimeID == "" {
			c.RuntimeID = k.Name
		}
		key := k.Namespace + "/" + k.Name
		if missing := CheckLabels(k.Labels); len(missing) > 0 {
			c.Problems = append(c.Problems, missingLabelsProblem("Kyma", key, missing))
		}
		if id := k.Labels[LabelRuntimeID]; id != "" && id != k.Name {
			c.Problems = append(c.Problems, problem(ReasonAmbiguous, "Kyma %s is labelled with runtime ID %s: KEB names the Kyma resource by its runtime ID", key, id))
		}
		if claimsOfRuntime[c.Key()] > 1 {
			c.Problems = append(c.Problems, problem(ReasonAmbiguous, "%d Kyma resources claim runtime %s", claimsOfRuntime[c.Key()], c.RuntimeID))
		}
		if c.ShootName != "" && claimsOfShoot[c.ShootName] > 1 {
			c.Problems = append(c.Problems, problem(ReasonAmbiguous, "%d Kyma resources name shoot %s", claimsOfShoot[c.ShootName], c.ShootName))
		}
		if names := shootsOfRuntime[c.RuntimeID]; len(names) > 1 {
			sort.Strings(names)
			c.Problems = append(c.Problems, problem(ReasonAmbiguous, "shoots %v all name runtime %s", names, c.RuntimeID))
		}
		c.NeedsRuntime = !existing.Runtimes[c.Key()]
		c.NeedsGardenerCluster = c.NeedsRuntime && !existing.GardenerClusters[c.Key()]
		if s, ok := byShoot[c.ShootName]; ok && c.ShootName != "" {
			matchedShoots[s.Name] = true
			c.CreatedBy = s.CreatedBy
			if c.NeedsRuntime {
				c.Problems = append(c.Problems, shootProblems(c, s)...)
			} else {
				c.NeedsApproval = !s.TakenOver && !s.Deleting && s.RuntimeID == c.RuntimeID
			}
		} else if c.NeedsRuntime && c.ShootName != "" {
			c.Problems = append(c.Problems, problem(ReasonShootMissing, "shoot %s named by Kyma %s does not exist in the Gardener project", c.ShootName, key))
		}
		out = append(out, c)
	}
	for _, s := range shoots {
		if matchedShoots[s.Name] || s.Managed || s.RuntimeID == "" {
			continue // unrelated shoots (no runtime ID) and the operator's own are not part of the migration
		}
		out = append(out, Candidate{RuntimeID: s.RuntimeID, ShootName: s.Name, CreatedBy: s.CreatedBy,
			Problems: []Problem{problem(ReasonNoKyma, "shoot %s was created for runtime %s, but no Kyma resource names it: without KEB's labels "+
				"no Runtime can be created (KEB deleted the runtime, or its Kyma resource lives in another namespace)", s.Name, s.RuntimeID)}})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Key() < out[j].Key() })
	return out
}

func shootProblems(c Candidate, s Shoot) []Problem {
	switch {
	case s.Deleting:
		return []Problem{problem(ReasonShootBeingDeleted, "shoot %s is being deleted", s.Name)}
	case s.RuntimeID == "":
		return []Problem{problem(ReasonShootWithoutRuntimeID, "shoot %s carries no runtime-id annotation (neither the infrastructure "+
			"manager's nor the provisioner's): nothing proves it belongs to runtime %s", s.Name, c.RuntimeID)}
	case s.RuntimeID != c.RuntimeID:
		return []Problem{problem(ReasonAmbiguous, "shoot %s was created for runtime %s, but Kyma %s/%s names it for runtime %s",
			s.Name, s.RuntimeID, c.Namespace, c.RuntimeID, c.RuntimeID)}
	case s.Managed:
		return []Problem{problem(ReasonShootManaged, "shoot %s is managed by this operator but runtime %s has no Runtime: its runtime was "+
			"deleted and the shoot may be waiting for deletion; restore it with kim restore instead", s.Name, c.RuntimeID)}
	}
	return nil
}

func problem(reason Reason, format string, args ...any) Problem {
	return Problem{Reason: reason, Message: fmt.Sprintf(format, args...)}
}
