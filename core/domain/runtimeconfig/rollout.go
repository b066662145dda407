package runtimeconfig

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
)

// RolloutPositions is the number of positions a rollout orders the fleet into: wave k admits the runtimes whose
// position is below k × share × RolloutPositions.
const RolloutPositions = 10000

// ContentHash identifies the set by everything a configuration of a runtime depends on: its objects, the pull
// secret with its data, the allowed kinds, the source and a problem that keeps it from being used. "" for nil (no
// set configured). Equal sets hash equally in every replica and across restarts.
func (b *Bootstrap) ContentHash() string {
	if b == nil {
		return ""
	}
	raw, err := json.Marshal(b) // maps marshal with sorted keys: the hash does not depend on their order
	if err != nil {
		return "" // plain values always marshal
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:12])
}

// BootstrapRecord is what a Runtime records of the bootstrap set last attempted inside it.
type BootstrapRecord struct {
	// Hash is the content hash of that set ("" when none was attempted yet).
	Hash string
	// Failed is true when that attempt did not reach the set (it was refused, invalid, or applying it failed).
	Failed bool
}

// RolloutPolicy says how a change of the bootstrap set reaches the fleet.
type RolloutPolicy struct {
	// Share of the fleet each wave adds, in (0, 1]. 1, 0 or less: every runtime at once, never stopped (the
	// behaviour before waves).
	Share float64
	// MaxFailures is the share, in [0, 1], of the admitted runtimes that tried the set that may fail it; with more
	// failures no runtime is given the set any more until it changes. At least one failure is tolerated.
	MaxFailures float64
}

// step is the number of positions each wave adds; RolloutPositions: all at once.
func (p RolloutPolicy) step() int {
	if !(p.Share > 0) || p.Share >= 1 { // NaN too
		return RolloutPositions
	}
	return max(1, min(int(math.Round(p.Share*RolloutPositions)), RolloutPositions))
}

// AllAtOnce reports whether the policy gives a set to every runtime at once (no waves, never stopped).
func (p RolloutPolicy) AllAtOnce() bool { return p.step() >= RolloutPositions }

// maxFailures is MaxFailures within [0, 1] (NaN: 0).
func (p RolloutPolicy) maxFailures() float64 {
	if !(p.MaxFailures > 0) {
		return 0
	}
	return min(p.MaxFailures, 1)
}

// RolloutMember is what the rollout knows of one runtime.
type RolloutMember struct {
	RuntimeID string
	Record    BootstrapRecord
	// New is true for a runtime that was never Ready: it has no earlier set to keep and nobody works on it yet, so
	// it is always admitted, and no wave waits for it.
	New bool
	// Paused is true while the operator does not configure the runtime (hibernated, being deleted, Failed): it is
	// admitted like any other, but no wave waits for it.
	Paused bool
}

// RolloutPosition is the runtime's place in the rollout of the set of that content hash, in [0, RolloutPositions):
// the same set orders the fleet the same way (a restart computes the same waves), each change anew (no runtime is
// always among the first).
func RolloutPosition(hash, runtimeID string) int {
	sum := sha256.Sum256([]byte(hash + "\x00" + runtimeID))
	return int(binary.BigEndian.Uint64(sum[:8]) % RolloutPositions)
}

// Rollout is the state of the rollout of one set over the fleet, derived from what the Runtimes record (nothing
// of it is stored: every replica and every restart derives the same state from the same records).
type Rollout struct {
	// Hash is the set's content hash.
	Hash string
	// Wave is the highest wave admitted, of Waves.
	Wave, Waves int
	// Stopped is true when more of the runtimes that tried the set failed it than tolerated: no runtime is given the
	// set any more, except those that tried it already (they retry) and new ones, until the set changes.
	Stopped bool
	// Tried counts the runtimes that tried the set (reached or failed), Failed those that failed it; Tolerated is
	// how many failures MaxFailures allows among Tried (at least one).
	Tried, Failed, Tolerated int
	// Waiting counts the runtimes of admitted waves that have not tried the set yet (neither new nor paused): the
	// next wave waits for them.
	Waiting int

	step int
}

// PlanRollout derives the rollout of the set hash over fleet. Wave 1 is admitted at once; wave k+1 when every
// runtime of the waves up to k that is neither new nor paused tried the set (a wave without such runtimes is
// complete at once), and the rollout has not stopped. Total: any fleet, in any order, gives a state (an empty one
// the first wave).
func PlanRollout(hash string, p RolloutPolicy, fleet []RolloutMember) Rollout {
	r := Rollout{Hash: hash, step: p.step()}
	r.Waves = (RolloutPositions + r.step - 1) / r.step
	waiting := make([]int, r.Waves) // per wave: runtimes a wave waits for
	tried := make([]bool, r.Waves)  // per wave: some runtime tried the set
	for _, m := range fleet {
		wave := RolloutPosition(hash, m.RuntimeID) / r.step
		switch {
		case m.Record.Hash == hash:
			r.Tried++
			tried[wave] = true
			if m.Record.Failed {
				r.Failed++
			}
		case !m.New && !m.Paused:
			waiting[wave]++
		}
	}
	r.Tolerated = max(1, int(math.Floor(p.maxFailures()*float64(r.Tried))))
	r.Wave = r.Waves
	for w, n := range waiting {
		if n > 0 {
			r.Wave = w + 1
			break
		}
	}
	if r.Waves > 1 && r.Failed > r.Tolerated {
		r.Stopped = true
		// The wave reported is the last one any runtime tried: a stop found when a wave completed admits no
		// further one.
		for r.Wave > 1 && !tried[r.Wave-1] {
			r.Wave--
		}
	}
	for w := range r.Wave {
		r.Waiting += waiting[w]
	}
	return r
}

// AllAtOnce reports whether the rollout gives the set to every runtime at once (one wave, never stopped).
func (r Rollout) AllAtOnce() bool { return r.step == 0 || r.step >= RolloutPositions }

// WaveOf is the wave the runtime is in (1-based).
func (r Rollout) WaveOf(runtimeID string) int {
	if r.AllAtOnce() {
		return 1
	}
	return RolloutPosition(r.Hash, runtimeID)/r.step + 1
}

// Admits reports whether the runtime may be given the set now: every runtime when all at once; otherwise a new
// runtime, one that tried the set already (it keeps retrying, also after a stop), and, unless the rollout
// stopped, one in an admitted wave.
func (r Rollout) Admits(m RolloutMember) bool {
	switch {
	case r.AllAtOnce(), m.New, m.Record.Hash == r.Hash:
		return true
	case r.Stopped:
		return false
	}
	return r.WaveOf(m.RuntimeID) <= r.Wave
}

// Hold is the outcome a runtime the rollout does not admit reports on its Bootstrapped condition. It names the
// runtime's own wave, not the current one, so that the message of a held runtime does not change while the
// waves before it pass (no status write per wave and held runtime).
func (r Rollout) Hold(m RolloutMember) Outcome {
	set := r.Hash
	if len(set) > 8 {
		set = set[:8]
	}
	if r.Stopped {
		return Failed(ReasonBootstrapWaitingForWave, fmt.Sprintf("The rollout of the changed bootstrap manifests (%s) stopped in wave %d of %d: "+
			"more of the runtimes that tried them failed than runtime.bootstrap.rollout.maxFailures tolerates. This runtime "+
			"(wave %d) keeps the manifests it has until the manifests change.", set, r.Wave, r.Waves, r.WaveOf(m.RuntimeID)))
	}
	return Failed(ReasonBootstrapWaitingForWave, fmt.Sprintf("The changed bootstrap manifests (%s) are rolled out in waves: this runtime "+
		"is in wave %d of %d and keeps the manifests it has until then.", set, r.WaveOf(m.RuntimeID), r.Waves))
}

// RecordBootstrap is what a configuration pass records of the set it attempted (applied is the set's content
// hash, "" when the pass did not attempt one: none configured, or held): reached for BootstrapCompleted; nothing
// new while its Deployments are not available yet (the wave waits for them); failed for every other outcome: the
// set was refused or invalid (BootstrapObjectRefused, BootstrapPullSecretRefused, BootstrapManifestsInvalid),
// applying it failed (BootstrapFailed), or the runtime did not answer or had no kyma-system on the way. Counting
// those as failed, not as not-yet-tried, keeps a runtime whose API server is gone from holding every rollout up,
// and makes a set that stops runtimes from answering stop its own rollout.
func RecordBootstrap(prev BootstrapRecord, applied string, o Outcome) BootstrapRecord {
	switch {
	case applied == "", o.Reason == "", o.Reason == ReasonBootstrapInProgress, o.Reason == ReasonBootstrapWaitingForWave:
		return prev
	case o.Reason == ReasonBootstrapCompleted:
		return BootstrapRecord{Hash: applied}
	}
	return BootstrapRecord{Hash: applied, Failed: true}
}
