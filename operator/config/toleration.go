package config

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Toleration is a seed toleration of shoot.tolerations, Gardener's spec.tolerations entry: a key, optionally with
// a value. It is written as the key alone ("ksa-assured-workload") or as {"key": ..., "value": ...}, the form of
// the previous infrastructure manager's converter configuration.
type Toleration struct {
	Key   string `json:"key"`
	Value string `json:"value,omitempty"`
}

// UnmarshalJSON accepts a key or an object with key and value (no other keys).
func (t *Toleration) UnmarshalJSON(b []byte) error {
	if bytes.HasPrefix(bytes.TrimSpace(b), []byte(`"`)) {
		*t = Toleration{}
		return json.Unmarshal(b, &t.Key)
	}
	type plain Toleration
	var p plain
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&p); err != nil {
		return fmt.Errorf("a toleration is a key or {key, value}: %w", err)
	}
	*t = Toleration(p)
	return nil
}

// MarshalJSON writes a toleration without value as its key, so a configuration written back reads as it was given.
func (t Toleration) MarshalJSON() ([]byte, error) {
	if t.Value == "" {
		return json.Marshal(t.Key)
	}
	type plain Toleration
	return json.Marshal(plain(t))
}
