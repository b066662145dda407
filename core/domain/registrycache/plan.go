package registrycache

import (
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/kyma-project/kim/core/domain/shoot"
)

// Verdict is the decision about one config: accepted (it becomes a cache) or refused with a stable reason, the
// field to fix and a message a customer can act on.
type Verdict struct {
	Accepted bool
	Reason   Reason
	Field    string
	Message  string
}

// MaxCredentialBytes caps the username and the password of a cache's credentials: registry tokens and service
// account keys are a few KiB; every copy is stored in the Gardener project and in the cluster, per runtime.
const MaxCredentialBytes = 16 << 10

// Needs lists what the use case must observe before Plan can decide: the credentials Secrets the statically valid
// configs name and the hosts whose resolution is checked (their upstream, and the remote URL's host when set).
func Needs(cfgs []Config) (secrets []Key, hosts []string) {
	static := validateStatic(cfgs)
	for _, c := range sortedByAge(cfgs) {
		if v := static[c.Key()]; !v.Accepted {
			continue
		}
		if k := c.SecretKey(); k != (Key{}) && !slices.Contains(secrets, k) {
			secrets = append(secrets, k)
		}
		for _, h := range checkedHosts(c.Cache) {
			if !slices.Contains(hosts, h) {
				hosts = append(hosts, h)
			}
		}
	}
	return secrets, hosts
}

// Input is everything Plan decides on.
type Input struct {
	RuntimeID, ShootName string
	Configs              []Config
	// Credentials are the observed Secrets of Needs; a key without entry counts as not found.
	Credentials map[Key]Credentials
	// Unresolvable maps hosts of Needs that do not resolve to what the resolver said. Hosts without entry resolve
	// (or were not checked: the check is off).
	Unresolvable map[string]string
}

// Plan is the desired state: the caches for Runtime.spec.imageRegistryCache (ordered by namespace and name), the
// garden copies of their credentials, and a verdict per config.
type Plan struct {
	Entries  []Entry
	Secrets  []GardenSecret
	Verdicts map[Key]Verdict
}

// SecretNames returns the names of the plan's garden secrets.
func (p Plan) SecretNames() []string {
	out := make([]string, 0, len(p.Secrets))
	for _, s := range p.Secrets {
		out = append(out, s.Name)
	}
	return out
}

// Refuse takes the caches whose garden copy is one of names out of the plan (with their copies) and gives their
// configs the verdict reason with message; the other caches stay as planned.
func (p Plan) Refuse(names []string, reason Reason, message string) Plan {
	out := Plan{Verdicts: maps.Clone(p.Verdicts)}
	for _, e := range p.Entries {
		if e.Cache.CredentialsSecret != "" && slices.Contains(names, e.Cache.CredentialsSecret) {
			out.Verdicts[Key{Namespace: e.Namespace, Name: e.Name}] = Verdict{Reason: reason, Field: "spec.secretReferenceName", Message: message}
			continue
		}
		out.Entries = append(out.Entries, e)
	}
	for _, s := range p.Secrets {
		if !slices.Contains(names, s.Name) {
			out.Secrets = append(out.Secrets, s)
		}
	}
	return out
}

// Decide validates every config and plans the caches of the valid ones. A bad config never stops the others: it
// gets its verdict and contributes nothing.
func Decide(in Input) Plan {
	p := Plan{Verdicts: validateStatic(in.Configs)}
	for _, c := range sortedByAge(in.Configs) {
		if !p.Verdicts[c.Key()].Accepted {
			continue
		}
		if v := checkResolution(c, in.Unresolvable); !v.Accepted {
			p.Verdicts[c.Key()] = v
			continue
		}
		cache := c.Cache
		if k := c.SecretKey(); k != (Key{}) {
			cred := in.Credentials[k]
			if v := checkCredentials(c, cred); !v.Accepted {
				p.Verdicts[c.Key()] = v
				continue
			}
			s := GardenSecret{Name: SecretName(in.RuntimeID, c.UID, cred.Data), RuntimeID: in.RuntimeID, CacheUID: c.UID,
				ShootName: in.ShootName, Data: maps.Clone(cred.Data)}
			p.Secrets = append(p.Secrets, s)
			cache.SecretReferenceName, cache.CredentialsSecret = s.Name, s.Name
		}
		p.Entries = append(p.Entries, Entry{Name: c.Name, Namespace: c.Namespace, UID: c.UID, Cache: cache})
	}
	slices.SortFunc(p.Entries, func(a, b Entry) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	slices.SortFunc(p.Secrets, func(a, b GardenSecret) int { return strings.Compare(a.Name, b.Name) })
	return p
}

// validateStatic checks what needs no observation: each cache's fields (the rules shoot generation applies) and
// that no two configs cache the same upstream (the oldest valid one keeps it).
func validateStatic(cfgs []Config) map[Key]Verdict {
	out := make(map[Key]Verdict, len(cfgs))
	owner := map[string]Key{}
	for _, c := range sortedByAge(cfgs) {
		check := c.Cache
		if c.SecretName != "" { // the garden copy is named later; the pair must only be consistent here
			check.SecretReferenceName, check.CredentialsSecret = c.SecretName, c.SecretName
		}
		if p := shoot.CheckRegistryCache(check); p != nil {
			out[c.Key()] = Verdict{Reason: fieldReason(p.Field), Field: "spec." + p.Field, Message: p.Message}
			continue
		}
		if h := hostOnly(c.Cache.Upstream); !strings.Contains(h, ".") && net.ParseIP(h) == nil {
			// A single-label name would be resolved, by the operator and by the cluster, through local search domains.
			out[c.Key()] = Verdict{Reason: ReasonInvalidUpstream, Field: "spec.upstream",
				Message: fmt.Sprintf("%q is a single-label host name; use the registry's fully qualified name, e.g. registry.example.com", c.Cache.Upstream)}
			continue
		}
		if first, taken := owner[c.Cache.Upstream]; taken {
			out[c.Key()] = Verdict{Reason: ReasonDuplicateUpstream, Field: "spec.upstream",
				Message: fmt.Sprintf("upstream %s is already cached by RegistryCacheConfig %s; remove one of them", c.Cache.Upstream, first)}
			continue
		}
		owner[c.Cache.Upstream] = c.Key()
		out[c.Key()] = Verdict{Accepted: true}
	}
	return out
}

func fieldReason(field string) Reason {
	switch field {
	case shoot.CacheFieldUpstream:
		return ReasonInvalidUpstream
	case shoot.CacheFieldRemoteURL:
		return ReasonInvalidRemoteURL
	case shoot.CacheFieldVolumeSize:
		return ReasonInvalidVolumeSize
	case shoot.CacheFieldGCTTL:
		return ReasonInvalidGarbageCollection
	case shoot.CacheFieldHTTPProxy, shoot.CacheFieldHTTPSProxy:
		return ReasonInvalidProxy
	}
	return ReasonInvalidSpec
}

// checkedHosts are the host names whose resolution is checked for a cache: the upstream's and the remote URL's.
func checkedHosts(c shoot.RegistryCache) []string {
	hosts := []string{hostOnly(c.Upstream)}
	if c.RemoteURL != "" {
		if u, err := url.Parse(c.RemoteURL); err == nil && u.Hostname() != "" && u.Hostname() != hosts[0] {
			hosts = append(hosts, u.Hostname())
		}
	}
	return hosts
}

func hostOnly(hostPort string) string {
	if h, _, err := net.SplitHostPort(hostPort); err == nil {
		return h
	}
	return hostPort
}

func checkResolution(c Config, unresolvable map[string]string) Verdict {
	for i, h := range checkedHosts(c.Cache) {
		why, bad := unresolvable[h]
		if !bad {
			continue
		}
		field := "spec.upstream"
		if i > 0 {
			field = "spec.remoteURL"
		}
		return Verdict{Reason: ReasonUpstreamUnreachable, Field: field,
			Message: fmt.Sprintf("host %s cannot be resolved (%s); check the registry's name", h, why)}
	}
	return Verdict{Accepted: true}
}

// checkCredentials requires a found Secret with exactly a non-empty username and password (the keys the
// registry-cache extension reads). The message names keys, never values.
func checkCredentials(c Config, cred Credentials) Verdict {
	ref := c.SecretKey().String()
	if !cred.Found {
		return Verdict{Reason: ReasonSecretMissing, Field: "spec.secretReferenceName",
			Message: fmt.Sprintf("Secret %s does not exist; create it in the namespace of the RegistryCacheConfig", ref)}
	}
	// Only the number of keys is reported: even key names are the customer's data.
	if len(cred.Data) != 2 || len(cred.Data[KeyUsername]) == 0 || len(cred.Data[KeyPassword]) == 0 {
		return Verdict{Reason: ReasonSecretInvalid, Field: "spec.secretReferenceName",
			Message: fmt.Sprintf("Secret %s must hold exactly the non-empty keys %s and %s (it has %d keys)", ref, KeyUsername, KeyPassword, len(cred.Data))}
	}
	if len(cred.Data[KeyUsername]) > MaxCredentialBytes || len(cred.Data[KeyPassword]) > MaxCredentialBytes {
		return Verdict{Reason: ReasonSecretInvalid, Field: "spec.secretReferenceName",
			Message: fmt.Sprintf("Secret %s: %s and %s may hold at most %d bytes each", ref, KeyUsername, KeyPassword, MaxCredentialBytes)}
	}
	return Verdict{Accepted: true}
}
