package registrycache

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"
	"strings"

	"github.com/kyma-project/kim/core/domain/shoot"
)

// SecretPrefix starts the name of every garden copy of registry credentials; the operator deletes only Secrets
// with it (and its labels).
const SecretPrefix = shoot.RegistryCredentialsPrefix

// SecretName is the content-addressed name of the garden copy of credentials data for a cache of a runtime:
// reg-cache-<hash of runtime ID, cache UID and data>. New credentials give a new name, so a copy never changes
// (it is immutable): the shoot switches to the new copy and the old one is collected once nothing uses it. The
// runtime and the cache are part of the hash, so two runtimes (or caches) never share a copy.
func SecretName(runtimeID, cacheUID string, data map[string][]byte) string {
	h := sha256.New()
	for _, part := range []string{runtimeID, cacheUID} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	for _, k := range slices.Sorted(maps.Keys(data)) {
		h.Write([]byte(k))
		h.Write([]byte{0})
		h.Write(data[k])
		h.Write([]byte{0})
	}
	return SecretPrefix + hex.EncodeToString(h.Sum(nil))[:20]
}

// Garbage returns the garden copies (names) of a runtime that can go: those neither the plan wants nor the shoot
// still references (the shoot switches to a new copy only when the Runtime controller applied the new spec). A
// runtime that is gone (or whose module is off) wants none. Names without SecretPrefix are never returned.
func Garbage(existing []string, wanted []string, referencedByShoot []string) []string {
	var out []string
	for _, n := range existing {
		if strings.HasPrefix(n, SecretPrefix) && !slices.Contains(wanted, n) && !slices.Contains(referencedByShoot, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// Missing returns the plan's secrets that do not exist yet.
func Missing(p Plan, existing []string) []GardenSecret {
	var out []GardenSecret
	for _, s := range p.Secrets {
		if !slices.Contains(existing, s.Name) {
			out = append(out, s)
		}
	}
	return out
}
