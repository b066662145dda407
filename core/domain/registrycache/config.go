// Package registrycache decides how the customer's RegistryCacheConfig objects in a runtime become the
// registry-cache configuration of the runtime's shoot: which caches are valid and apply, the content-addressed
// copies of their credentials in the Gardener project, which copies are garbage, and what each object's status
// says. It is pure: the use case observes (runtime, KCP, garden) and acts.
package registrycache

import (
	"cmp"
	"slices"
	"time"

	"github.com/kyma-project/kim/core/domain/shoot"
)

// Config is one RegistryCacheConfig object of a runtime as the customer wrote it.
type Config struct {
	Namespace, Name, UID string
	Generation           int64
	CreatedAt            time.Time
	// Cache is the spec in shoot terms. Its SecretReferenceName and CredentialsSecret are empty: the credentials
	// are named by SecretName.
	Cache shoot.RegistryCache
	// SecretName is spec.secretReferenceName: a Secret in the object's namespace with the upstream credentials;
	// empty: the upstream needs none.
	SecretName string
	// Status is the status the object has now (so it is written only when it changes).
	Status Status
}

// Key identifies a namespaced object in the runtime.
type Key struct{ Namespace, Name string }

// String renders the key as namespace/name.
func (k Key) String() string { return k.Namespace + "/" + k.Name }

// Key returns the object's key.
func (c Config) Key() Key { return Key{Namespace: c.Namespace, Name: c.Name} }

// SecretKey returns the key of the credentials Secret (zero when the config names none).
func (c Config) SecretKey() Key {
	if c.SecretName == "" {
		return Key{}
	}
	return Key{Namespace: c.Namespace, Name: c.SecretName}
}

// Credentials is what the operator observed of a credentials Secret in the runtime. Data is never logged, never
// put into messages, events or conditions.
type Credentials struct {
	Found bool
	Data  map[string][]byte
}

// Credential keys the registry-cache extension reads from a credentials Secret: exactly these two.
const (
	KeyUsername = "username"
	KeyPassword = "password"
)

// Entry is one cache as written to Runtime.spec.imageRegistryCache: the object it comes from and the cache, whose
// SecretReferenceName and CredentialsSecret name the garden copy of the credentials.
type Entry struct {
	Name, Namespace, UID string
	Cache                shoot.RegistryCache
}

// GardenSecret is a copy of credentials in the Gardener project: immutable, content-addressed, labelled with the
// runtime, the cache (the RegistryCacheConfig's UID) and the shoot.
type GardenSecret struct {
	Name      string
	RuntimeID string
	CacheUID  string
	ShootName string
	Data      map[string][]byte
}

// byAge orders configs oldest first (then by namespace and name): the oldest valid object keeps an upstream that
// several name, so a new duplicate never takes a working cache away.
func byAge(a, b Config) int {
	if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
		return c
	}
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}

// sortedByAge returns a sorted copy.
func sortedByAge(cfgs []Config) []Config {
	out := slices.Clone(cfgs)
	slices.SortStableFunc(out, byAge)
	return out
}

// EntriesEqual reports whether two lists of entries write the same Runtime spec.
func EntriesEqual(a, b []Entry) bool {
	return slices.EqualFunc(a, b, func(x, y Entry) bool {
		return x.Name == y.Name && x.Namespace == y.Namespace && x.UID == y.UID && CacheEqual(x.Cache, y.Cache)
	})
}

// CacheEqual compares the values of two caches the operator sets (unset TLS and HighAvailability included).
func CacheEqual(a, b shoot.RegistryCache) bool {
	return a.Upstream == b.Upstream && a.RemoteURL == b.RemoteURL && a.VolumeSize == b.VolumeSize &&
		a.VolumeStorageClass == b.VolumeStorageClass && a.GarbageCollectionTTL == b.GarbageCollectionTTL &&
		a.SecretReferenceName == b.SecretReferenceName && a.CredentialsSecret == b.CredentialsSecret &&
		a.HighAvailability == b.HighAvailability && a.HTTPProxy == b.HTTPProxy && a.HTTPSProxy == b.HTTPSProxy &&
		(a.TLS == nil) == (b.TLS == nil) && (a.TLS == nil || *a.TLS == *b.TLS)
}
