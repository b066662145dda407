package gardener

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"sync"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kyma-project/kim/core/ports"
)

// inSyncMemo remembers, per shoot, the inputs of the last comparison that found the shoot in sync with an apply.
// Gardener reports on a healthy shoot many times an hour (its last operation, conditions), each report is an event
// for the Runtime controller, and comparing the apply with the shoot field by field was the largest share of the
// CPU such an event costs. The comparison is a function of the apply, the shoot's spec and its labels and
// annotations, and of the structured-authentication ConfigMap: Gardener raises the generation with every change of the
// spec (its update strategy), and the API server the ConfigMap's resourceVersion with every write, so the same UIDs,
// generation, metadata, ConfigMap version and apply give the same answer without comparing again. Only answers "in sync" are kept:
// a shoot out of sync is written next, which changes the key anyway.
type inSyncMemo struct {
	mu     sync.Mutex
	byName map[string]inSyncKey
	// compared counts the comparisons made (tests).
	compared int
}

// inSyncKey is what a comparison depends on.
type inSyncKey struct {
	uid        types.UID
	generation int64
	// configMap is the authentication ConfigMap's UID and resourceVersion ("" without one).
	configMap string
	// inputs is a digest of the apply and of the shoot's labels and annotations.
	inputs [sha256.Size]byte
}

// inSyncKeyOf is the key of a comparison of a with current; false when the inputs cannot be encoded (the
// comparison then always runs).
func inSyncKeyOf(a ports.ShootApply, current *gardencorev1beta1.Shoot, cm *corev1.ConfigMap) (inSyncKey, bool) {
	// Precondition and HoldAdoptedChanges are left out: they pin or hold a write and change nothing compared;
	// InSyncRecord is an answer, not an input.
	// encoding/json writes maps in key order, so equal inputs encode equally.
	raw, err := json.Marshal(struct {
		Spec                                 any
		RuntimeID, SpecHash, Plan, Namespace string
		RuntimeGeneration                    int64
		Labels, Annotations                  map[string]string
	}{a.Spec, a.RuntimeID, a.SpecHash, a.Plan, a.Spec.Namespace, a.RuntimeGeneration, current.Labels, current.Annotations})
	if err != nil {
		return inSyncKey{}, false
	}
	key := inSyncKey{uid: current.UID, generation: current.Generation, inputs: sha256.Sum256(raw)}
	if cm != nil {
		key.configMap = string(cm.UID) + "/" + cm.ResourceVersion
	}
	return key, true
}

// inSyncRecordVersion is part of every record: a record of another way of keying (another version of the
// operator) never matches, and the shoot is compared once more instead.
const inSyncRecordVersion = "kim-insync-1"

// record is the key as a string a caller keeps (ports.SyncCheck.Record): a digest of everything in it.
func (k inSyncKey) record() string {
	h := sha256.New()
	h.Write([]byte(inSyncRecordVersion))
	h.Write([]byte{0})
	h.Write([]byte(k.uid))
	h.Write([]byte{0})
	h.Write(strconv.AppendInt(nil, k.generation, 10))
	h.Write([]byte{0})
	h.Write([]byte(k.configMap))
	h.Write([]byte{0})
	h.Write(k.inputs[:])
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// holds reports whether the last comparison of the shoot name had key and found it in sync.
func (m *inSyncMemo) holds(name string, key inSyncKey) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	k, ok := m.byName[name]
	return ok && k == key
}

// remember records that the shoot name was found in sync under key.
func (m *inSyncMemo) remember(name string, key inSyncKey) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byName == nil {
		m.byName = map[string]inSyncKey{}
	}
	m.byName[name] = key
}

// forget drops the shoot name (gone, or not ours).
func (m *inSyncMemo) forget(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.byName, name)
}

// count records a comparison.
func (m *inSyncMemo) count() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.compared++
}
