package registrycache

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kyma-project/kim/core/domain/shoot"
)

var t0 = time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)

func cfg(ns, name, upstream string, age int) Config {
	return Config{Namespace: ns, Name: name, UID: "uid-" + name, Generation: 1, CreatedAt: t0.Add(time.Duration(age) * time.Minute),
		Cache: shoot.RegistryCache{Upstream: upstream}}
}

func withSecret(c Config, secret string) Config { c.SecretName = secret; return c }

var creds = map[string][]byte{KeyUsername: []byte("robot"), KeyPassword: []byte("s3cr3t-pw")}

func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		reason      string
		in          Input
		accepted    []string // config names applied, in spec order
		refused     map[string]Reason
		wantSecrets int
	}{
		{
			reason:   "valid configs become caches, ordered by namespace and name",
			in:       Input{RuntimeID: "rt", Configs: []Config{cfg("b", "x", "quay.io", 1), cfg("a", "y", "docker.io", 2)}},
			accepted: []string{"y", "x"},
		},
		{
			reason:   "a duplicate upstream is refused; the oldest object keeps it, whatever the names",
			in:       Input{RuntimeID: "rt", Configs: []Config{cfg("a", "new", "docker.io", 5), cfg("z", "old", "docker.io", 1)}},
			accepted: []string{"old"},
			refused:  map[string]Reason{"new": ReasonDuplicateUpstream},
		},
		{
			reason: "an invalid object does not take an upstream from a valid newer one",
			in: Input{RuntimeID: "rt", Configs: []Config{
				func() Config { c := cfg("a", "bad", "docker.io", 1); c.Cache.VolumeSize = "-1Gi"; return c }(),
				cfg("a", "good", "docker.io", 2)}},
			accepted: []string{"good"},
			refused:  map[string]Reason{"bad": ReasonInvalidVolumeSize},
		},
		{
			reason: "bad fields are refused with their reason; the others keep working",
			in: Input{RuntimeID: "rt", Configs: []Config{
				cfg("a", "host", "Not A Host", 1),
				func() Config { c := cfg("a", "ttl", "ghcr.io", 1); c.Cache.GarbageCollectionTTL = "a week"; return c }(),
				func() Config { c := cfg("a", "proxy", "gcr.io", 1); c.Cache.HTTPSProxy = "proxy:3128"; return c }(),
				func() Config { c := cfg("a", "remote", "r.io", 1); c.Cache.RemoteURL = "ftp://r.io"; return c }(),
				cfg("a", "fine", "quay.io", 1)}},
			accepted: []string{"fine"},
			refused: map[string]Reason{"host": ReasonInvalidUpstream, "ttl": ReasonInvalidGarbageCollection,
				"proxy": ReasonInvalidProxy, "remote": ReasonInvalidRemoteURL},
		},
		{
			reason: "an upstream that does not resolve is refused, also through its remote URL",
			in: Input{RuntimeID: "rt", Configs: []Config{cfg("a", "nx", "nx.example", 1),
				func() Config {
					c := cfg("a", "rem", "docker.io", 1)
					c.Cache.RemoteURL = "https://mirror.invalid:8443"
					return c
				}(),
				cfg("a", "ok", "quay.io", 1)},
				Unresolvable: map[string]string{"nx.example": "no such host", "mirror.invalid": "no such host"}},
			accepted: []string{"ok"},
			refused:  map[string]Reason{"nx": ReasonUpstreamUnreachable, "rem": ReasonUpstreamUnreachable},
		},
		{
			reason: "a single-label upstream is refused (it would resolve through search domains); an IP is not",
			in: Input{RuntimeID: "rt", Configs: []Config{cfg("a", "short", "registry", 1), cfg("a", "local", "localhost:5000", 1),
				cfg("a", "ip", "10.0.0.7:5000", 1), cfg("a", "fqdn", "registry.example.com", 1)}},
			accepted: []string{"fqdn", "ip"},
			refused:  map[string]Reason{"short": ReasonInvalidUpstream, "local": ReasonInvalidUpstream},
		},
		{
			reason: "credentials above the size cap are refused",
			in: Input{RuntimeID: "rt", Configs: []Config{withSecret(cfg("a", "huge", "docker.io", 1), "huge"), withSecret(cfg("a", "ok", "quay.io", 1), "ok")},
				Credentials: map[Key]Credentials{
					{"a", "huge"}: {Found: true, Data: map[string][]byte{KeyUsername: []byte("u"), KeyPassword: make([]byte, MaxCredentialBytes+1)}},
					{"a", "ok"}:   {Found: true, Data: map[string][]byte{KeyUsername: []byte("u"), KeyPassword: make([]byte, MaxCredentialBytes)}},
				}},
			accepted:    []string{"ok"},
			refused:     map[string]Reason{"huge": ReasonSecretInvalid},
			wantSecrets: 1,
		},
		{
			reason: "a missing or malformed Secret refuses its cache only; a good one becomes a garden copy",
			in: Input{RuntimeID: "rt", Configs: []Config{
				withSecret(cfg("a", "missing", "docker.io", 1), "nope"),
				withSecret(cfg("a", "extra", "ghcr.io", 1), "extra"),
				withSecret(cfg("a", "empty", "gcr.io", 1), "empty"),
				withSecret(cfg("a", "good", "quay.io", 1), "good")},
				Credentials: map[Key]Credentials{
					{"a", "extra"}: {Found: true, Data: map[string][]byte{KeyUsername: []byte("u"), KeyPassword: []byte("p"), "token": []byte("t")}},
					{"a", "empty"}: {Found: true, Data: map[string][]byte{KeyUsername: []byte("u"), KeyPassword: nil}},
					{"a", "good"}:  {Found: true, Data: creds},
				}},
			accepted:    []string{"good"},
			refused:     map[string]Reason{"missing": ReasonSecretMissing, "extra": ReasonSecretInvalid, "empty": ReasonSecretInvalid},
			wantSecrets: 1,
		},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			p := Decide(tc.in)
			var got []string
			for _, e := range p.Entries {
				got = append(got, e.Name)
			}
			if diff := cmp.Diff(tc.accepted, got); diff != "" {
				t.Errorf("accepted (-want +got):\n%s", diff)
			}
			refused := map[string]Reason{}
			for k, v := range p.Verdicts {
				if !v.Accepted {
					refused[k.Name] = v.Reason
					if v.Field == "" || v.Message == "" {
						t.Errorf("%s: refusal without field or message: %+v", k, v)
					}
				}
			}
			if tc.refused == nil {
				tc.refused = map[string]Reason{}
			}
			if diff := cmp.Diff(tc.refused, refused); diff != "" {
				t.Errorf("refused (-want +got):\n%s", diff)
			}
			if len(p.Secrets) != tc.wantSecrets {
				t.Errorf("%d garden secrets, want %d", len(p.Secrets), tc.wantSecrets)
			}
		})
	}
}

func TestDecideReferencesTheGardenCopy(t *testing.T) {
	c := withSecret(cfg("team", "docker", "docker.io", 1), "rc-secret")
	p := Decide(Input{RuntimeID: "rt-1", ShootName: "c-1", Configs: []Config{c},
		Credentials: map[Key]Credentials{{"team", "rc-secret"}: {Found: true, Data: creds}}})
	if len(p.Entries) != 1 || len(p.Secrets) != 1 {
		t.Fatalf("plan %+v", p)
	}
	s, e := p.Secrets[0], p.Entries[0]
	want := GardenSecret{Name: SecretName("rt-1", c.UID, creds), RuntimeID: "rt-1", CacheUID: c.UID, ShootName: "c-1", Data: creds}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("garden secret (-want +got):\n%s", diff)
	}
	if e.Cache.SecretReferenceName != s.Name || e.Cache.CredentialsSecret != s.Name {
		t.Errorf("entry references %q/%q, want the copy %s", e.Cache.SecretReferenceName, e.Cache.CredentialsSecret, s.Name)
	}
	// The spec entry is valid for shoot generation as it is.
	if prob := shoot.CheckRegistryCache(e.Cache); prob != nil {
		t.Errorf("entry is not a valid cache: %+v", prob)
	}
}

func TestNeedsOnlyWhatValidConfigsUse(t *testing.T) {
	bad := withSecret(cfg("a", "bad", "Not A Host", 1), "s1")
	dup := withSecret(cfg("a", "dup", "docker.io", 3), "s2")
	good := withSecret(cfg("a", "good", "docker.io", 2), "s3")
	good.Cache.RemoteURL = "https://registry-1.docker.io"
	secrets, hosts := Needs([]Config{bad, dup, good})
	if diff := cmp.Diff([]Key{{"a", "s3"}}, secrets); diff != "" {
		t.Errorf("secrets (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"docker.io", "registry-1.docker.io"}, hosts); diff != "" {
		t.Errorf("hosts (-want +got):\n%s", diff)
	}
}

func TestSecretNameIsContentAddressed(t *testing.T) {
	a := SecretName("rt-1", "uid-1", creds)
	if !strings.HasPrefix(a, SecretPrefix) || len(a) > 63 {
		t.Fatalf("name %q", a)
	}
	if a != SecretName("rt-1", "uid-1", map[string][]byte{KeyPassword: []byte("s3cr3t-pw"), KeyUsername: []byte("robot")}) {
		t.Error("the same content must give the same name")
	}
	for _, other := range []string{
		SecretName("rt-2", "uid-1", creds),
		SecretName("rt-1", "uid-2", creds),
		SecretName("rt-1", "uid-1", map[string][]byte{KeyUsername: []byte("robot"), KeyPassword: []byte("rotated")}),
		// Key/value boundaries are part of the hash: moving bytes between them changes the name.
		SecretName("rt-1", "uid-1", map[string][]byte{KeyUsername: []byte("robots3cr3t-pw"), KeyPassword: nil}),
	} {
		if other == a {
			t.Errorf("different runtime, cache or content gave the same name %s", a)
		}
	}
	if strings.Contains(a, "s3cr3t") || strings.Contains(a, "robot") {
		t.Errorf("name %s reveals the credentials", a)
	}
}

func TestGarbage(t *testing.T) {
	existing := []string{"reg-cache-old", "reg-cache-new", "reg-cache-used", "aws-credentials"}
	got := Garbage(existing, []string{"reg-cache-new"}, []string{"reg-cache-used"})
	if diff := cmp.Diff([]string{"reg-cache-old"}, got); diff != "" {
		t.Errorf("garbage (-want +got):\n%s", diff)
	}
	if got := Garbage(existing, nil, nil); len(got) != 3 {
		t.Errorf("a runtime that wants nothing: garbage %v, want the three reg-cache copies and never another Secret", got)
	}
}

func TestStatusOf(t *testing.T) {
	good := withSecret(cfg("a", "good", "docker.io", 1), "s")
	good.Generation = 3
	bad := cfg("a", "bad", "Not A Host", 1)
	p := Decide(Input{RuntimeID: "rt", Configs: []Config{good, bad},
		Credentials: map[Key]Credentials{{"a", "s"}: {Found: true, Data: creds}}})
	entry := p.Entries[0]
	view := ShootView{Exists: true, Reconciled: true, Caches: []shoot.RegistryCache{entry.Cache}}
	for _, tc := range []struct {
		reason   string
		c        Config
		applied  Applied
		conflict bool
		want     Status
	}{
		{"refused: Error with the reason and the field", bad, AppliedIn(view), false,
			Status{State: StateError, ConditionStatus: "False", Reason: ReasonInvalidUpstream, ObservedGeneration: 1}},
		{"accepted and in the reconciled shoot: Ready", good, AppliedIn(view), false,
			Status{State: StateReady, ConditionStatus: "True", Reason: ReasonApplied, ObservedGeneration: 3}},
		{"accepted, shoot not reconciled yet: Pending", good, AppliedIn(ShootView{Exists: true, Caches: view.Caches}), false,
			Status{State: StatePending, ConditionStatus: "Unknown", Reason: ReasonPending, ObservedGeneration: 3}},
		{"accepted, shoot with other values (old credentials): Pending", good,
			AppliedIn(ShootView{Exists: true, Reconciled: true, Caches: []shoot.RegistryCache{{Upstream: "docker.io"}}}), false,
			Status{State: StatePending, ConditionStatus: "Unknown", Reason: ReasonPending, ObservedGeneration: 3}},
		{"the Runtime's field is owned by another manager: Error", good, AppliedIn(view), true,
			Status{State: StateError, ConditionStatus: "False", Reason: ReasonRuntimeSpecConflict, ObservedGeneration: 3}},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			got := StatusOf(tc.c, p, tc.applied, tc.conflict)
			if got.Message == "" {
				t.Error("no message")
			}
			got.Message = ""
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestMessagesNeverCarryCredentials(t *testing.T) {
	secretValue := "hunter2-UNIQUE-credential"
	cfgs := []Config{withSecret(cfg("a", "one", "docker.io", 1), "bad"), withSecret(cfg("a", "two", "quay.io", 1), "good")}
	p := Decide(Input{RuntimeID: "rt", Configs: cfgs, Credentials: map[Key]Credentials{
		{"a", "bad"}:  {Found: true, Data: map[string][]byte{KeyUsername: []byte(secretValue), "pass": []byte(secretValue)}},
		{"a", "good"}: {Found: true, Data: map[string][]byte{KeyUsername: []byte(secretValue), KeyPassword: []byte(secretValue)}},
	}})
	for _, c := range cfgs {
		st := StatusOf(c, p, func(Entry) bool { return false }, false)
		if strings.Contains(st.Message, secretValue) || strings.Contains(p.Verdicts[c.Key()].Message, secretValue) {
			t.Errorf("status of %s reveals the credentials: %q", c.Key(), st.Message)
		}
	}
	for _, e := range p.Entries {
		if strings.Contains(e.Cache.SecretReferenceName+e.Cache.CredentialsSecret, secretValue) {
			t.Errorf("entry reveals the credentials: %+v", e)
		}
	}
}
