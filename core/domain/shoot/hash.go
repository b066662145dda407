package shoot

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// Hash identifies a generated spec: equal specs hash equally (encoding/json sorts map keys). It is recorded on the
// shoot, so a changed hash means the Runtime or the operator's configuration asks for something new. Empty when the
// spec cannot be encoded (it always can: it holds only plain values).
func (s Spec) Hash() string {
	raw, err := json.Marshal(s)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:12])
}
