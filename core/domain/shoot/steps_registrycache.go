package shoot

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// CacheProblem says what is wrong with one registry cache: Field is the path inside the cache configuration
// ("upstream", "volume.size", ...), the same in a Runtime's imageRegistryCache[].config and in a RegistryCacheConfig's
// spec.
type CacheProblem struct {
	Field   string
	Message string
}

// Fields of a cache configuration CheckRegistryCache names.
const (
	CacheFieldUpstream      = "upstream"
	CacheFieldRemoteURL     = "remoteURL"
	CacheFieldVolumeSize    = "volume.size"
	CacheFieldGCTTL         = "garbageCollection.ttl"
	CacheFieldSecretRefName = "secretReferenceName"
	CacheFieldHTTPProxy     = "proxy.httpProxy"
	CacheFieldHTTPSProxy    = "proxy.httpsProxy"
)

// CheckRegistryCache validates one cache as the registry-cache extension would accept it (upstream a DNS subdomain
// with an optional port, remote URL and proxies absolute http(s) URLs, a positive volume size, a non-negative
// Go duration as TTL); nil when it is valid. Uniqueness of upstreams is checked across caches by the callers.
func CheckRegistryCache(c RegistryCache) *CacheProblem {
	bad := func(field, format string, args ...any) *CacheProblem {
		return &CacheProblem{Field: field, Message: fmt.Sprintf(format, args...)}
	}
	switch {
	case !registryHost(c.Upstream):
		return bad(CacheFieldUpstream, "%q must be a registry host name with an optional port, e.g. docker.io or registry.example.com:5000", c.Upstream)
	case c.RemoteURL != "" && !httpURL(c.RemoteURL):
		return bad(CacheFieldRemoteURL, "%q must be an http:// or https:// URL with a host", c.RemoteURL)
	case c.VolumeSize != "" && !positiveQuantity(c.VolumeSize):
		return bad(CacheFieldVolumeSize, "%q must be a positive quantity, e.g. 10Gi or 500M", c.VolumeSize)
	case (c.SecretReferenceName == "") != (c.CredentialsSecret == ""):
		return bad(CacheFieldSecretRefName, "secret reference and credentials secret must be set together")
	case c.HTTPProxy != "" && !httpURL(c.HTTPProxy):
		return bad(CacheFieldHTTPProxy, "%q must be an http:// or https:// URL with a host", c.HTTPProxy)
	case c.HTTPSProxy != "" && !httpURL(c.HTTPSProxy):
		return bad(CacheFieldHTTPSProxy, "%q must be an http:// or https:// URL with a host", c.HTTPSProxy)
	}
	if c.GarbageCollectionTTL != "" {
		if d, err := time.ParseDuration(c.GarbageCollectionTTL); err != nil || d < 0 {
			return bad(CacheFieldGCTTL, "%q is not a duration like 168h (0s disables garbage collection)", c.GarbageCollectionTTL)
		}
	}
	return nil
}

// stepRegistryCache configures pull-through caches; with none, the extension is left out, which on
// update removes it.
func stepRegistryCache(in input, s *Spec) error {
	if len(in.rt.RegistryCaches) == 0 {
		return nil
	}
	caches := make([]RegistryCache, 0, len(in.rt.RegistryCaches))
	seen := map[string]bool{}
	for i, c := range in.rt.RegistryCaches {
		field := fmt.Sprintf("spec.imageRegistryCache[%d]", i)
		if p := CheckRegistryCache(c); p != nil {
			return invalid(ReasonInvalidRegistryCache, field+".config."+p.Field, "%s", p.Message)
		}
		if seen[c.Upstream] {
			return invalid(ReasonInvalidRegistryCache, field+".config.upstream", "upstream %q is cached twice", c.Upstream)
		}
		seen[c.Upstream] = true
		if kept, ok := credentialsNotYetCopied(in, c); ok {
			c.SecretReferenceName, c.CredentialsSecret = kept.ResourceName, kept.SecretName
		} else if c.CredentialsSecret != "" && !OwnRegistryCredentials(in.rt, c.CredentialsSecret) {
			return invalid(ReasonForeignRegistryCredentials, field+".config."+CacheFieldSecretRefName,
				"Secret %q is not a copy of registry credentials of runtime %s (%s*, labelled with the runtime ID); only the operator's own copies can be referenced",
				c.CredentialsSecret, in.rt.ID, RegistryCredentialsPrefix)
		}
		caches = append(caches, c)
		if c.SecretReferenceName != "" {
			s.Resources = append(s.Resources, ResourceRef{Name: c.SecretReferenceName, APIVersion: "v1", Kind: "Secret", TargetName: c.CredentialsSecret})
		}
	}
	s.Extensions = append(s.Extensions, Extension{Type: ExtensionRegistryCache, Config: RegistryCacheConfig{Caches: caches}})
	return nil
}

// credentialsNotYetCopied finds the credentials an existing shoot's cache of c's upstream references when c names
// a Secret that cannot be a copy in the project (no reg-cache- prefix): the Secret in the runtime, as the previous
// manager's registry cache controller wrote it into spec.imageRegistryCache, until this operator's registry cache
// sync replaces the entry with its own copy. The shoot keeps the reference it has (nothing new is referenced);
// without one the name is refused as foreign.
func credentialsNotYetCopied(in input, c RegistryCache) (CurrentRegistryCredentials, bool) {
	if in.current == nil || c.CredentialsSecret == "" || strings.HasPrefix(c.CredentialsSecret, RegistryCredentialsPrefix) {
		return CurrentRegistryCredentials{}, false
	}
	for _, cur := range in.current.RegistryCacheCredentials {
		if cur.Upstream == c.Upstream && cur.ResourceName != "" && strings.HasPrefix(cur.SecretName, RegistryCredentialsPrefix) {
			return cur, true
		}
	}
	return CurrentRegistryCredentials{}, false
}

// RegistryCredentialsPrefix starts the name of every copy of registry credentials in the Gardener project.
const RegistryCredentialsPrefix = "reg-cache-"

// OwnRegistryCredentials tells whether a registry cache of rt may reference the project Secret name: a
// reg-cache-* copy confirmed (by its labels) to be made for rt.
func OwnRegistryCredentials(rt Runtime, name string) bool {
	return strings.HasPrefix(name, RegistryCredentialsPrefix) && slices.Contains(rt.RegistryCredentialCopies, name)
}

// httpURL accepts absolute http(s) URLs with a host, as the registry-cache extension passes them on.
func httpURL(v string) bool {
	u, err := url.Parse(v)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// registryHost accepts "host" or "host:port" with a DNS subdomain host.
func registryHost(v string) bool {
	host, port, hasPort := strings.Cut(v, ":")
	if hasPort {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return false
		}
	}
	return isDNSSubdomain(host)
}

func isDNSSubdomain(name string) bool {
	if name == "" || len(name) > 253 {
		return false
	}
	for _, label := range strings.Split(name, ".") {
		if len(label) > 63 || !dnsLabel.MatchString(label) {
			return false
		}
	}
	return true
}
