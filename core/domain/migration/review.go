package migration

import "strings"

// Difference is one value the operator's first apply after adopting a shoot would write over what the shoot (or
// its authentication ConfigMap) holds. Want and Have are rendered values ("" for Have: absent).
type Difference struct {
	Path string `json:"path"`
	Want string `json:"want"`
	Have string `json:"have,omitempty"`
	// Kind is how Review classified it.
	Kind DifferenceKind `json:"kind"`
}

// DifferenceKind classifies a difference.
type DifferenceKind string

// Kinds of differences.
const (
	// Blocking: the takeover would change the cluster; the Runtime is not created unless the path is accepted.
	Blocking DifferenceKind = "blocking"
	// Accepted: a blocking difference a person accepted (--accept); the operator will write it.
	Accepted DifferenceKind = "accepted"
	// CredentialsSwitch: the switch from a SecretBinding to the CredentialsBinding of the same name, which the operator
	// does once after adoption (Gardener accepts it only for the same credentials).
	CredentialsSwitch DifferenceKind = "credentials-binding-switch"
	// MetadataAddition: a label or annotation the shoot does not have yet; it changes nothing in the cluster.
	MetadataAddition DifferenceKind = "metadata-addition"
)

// CredentialsBindingPath is the path of the shoot's credentials binding name in differences.
const CredentialsBindingPath = ".spec.credentialsBindingName"

// GenerationPath is the difference the gardener-apiserver's dry run reports when the write would start a new
// generation (Gardener reconciles the cluster then).
const GenerationPath = ".metadata.generation"

// Acceptance is one --accept: a path prefix, for every runtime or only for one (by runtime ID or shoot name).
type Acceptance struct {
	Runtime string // empty: every runtime
	Path    string
}

// ParseAcceptance reads "[RUNTIME_ID_OR_SHOOT:]PATH"; a leading "." of the path is optional.
func ParseAcceptance(s string) Acceptance {
	a := Acceptance{Path: s}
	if i := strings.Index(s, ":"); i > 0 && !strings.ContainsAny(s[:i], ".[") {
		a.Runtime, a.Path = s[:i], s[i+1:]
	}
	a.Path = "." + strings.TrimPrefix(a.Path, ".")
	return a
}

func (a Acceptance) covers(runtimeID, shootName, path string) bool {
	if a.Runtime != "" && a.Runtime != runtimeID && a.Runtime != shootName {
		return false
	}
	return path == a.Path || strings.HasPrefix(path, a.Path+".") || strings.HasPrefix(path, a.Path+"[")
}

// Review classifies the differences of one runtime's takeover and reports whether any still blocks it. The switch of
// a shoot still on a SecretBinding (secretBinding not empty) to the CredentialsBinding and labels or annotations the
// shoot lacks are expected; every other difference blocks unless an acceptance covers its path.
func Review(runtimeID, shootName, secretBinding string, diffs []Difference, accept []Acceptance) ([]Difference, bool) {
	out := make([]Difference, 0, len(diffs))
	blocked := false
	for _, d := range diffs {
		switch {
		case secretBinding != "" && d.Path == CredentialsBindingPath && d.Have == "" && d.Want == secretBinding:
			d.Kind = CredentialsSwitch
		case d.Have == "" && (strings.HasPrefix(d.Path, ".metadata.labels.") || strings.HasPrefix(d.Path, ".metadata.annotations.")):
			d.Kind = MetadataAddition
		case accepted(accept, runtimeID, shootName, d.Path):
			d.Kind = Accepted
		default:
			d.Kind = Blocking
			blocked = true
		}
		out = append(out, d)
	}
	return out, reviewGeneration(out, blocked)
}

// reviewGeneration: a new generation that follows from changes a person accepted (or the expected binding switch)
// is accepted with them; one without any such change (the write would re-serialise what the shoot holds) still
// blocks, as does any other blocking difference. It reports whether anything still blocks.
func reviewGeneration(diffs []Difference, blocked bool) bool {
	gen, others, reviewed := -1, false, false
	for i, d := range diffs {
		switch {
		case d.Path == GenerationPath:
			gen = i
		case d.Kind == Blocking:
			others = true
		case d.Kind == Accepted || d.Kind == CredentialsSwitch:
			reviewed = true
		}
	}
	if gen < 0 || diffs[gen].Kind != Blocking || others || !reviewed {
		return blocked
	}
	diffs[gen].Kind = Accepted
	return false
}

func accepted(accept []Acceptance, runtimeID, shootName, path string) bool {
	for _, a := range accept {
		if a.covers(runtimeID, shootName, path) {
			return true
		}
	}
	return false
}
