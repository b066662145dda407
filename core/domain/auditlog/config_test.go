package auditlog

import (
	"strings"
	"testing"
)

// TestConfigProblem: only an https URL with a host and no user information, and a Secret name that is a DNS-1123
// subdomain, each at most 128 characters, reach a shoot; a tenant with anything else is never free.
func TestConfigProblem(t *testing.T) {
	long := "a" + strings.Repeat("b", MaxConfigLength)
	for _, tc := range []struct {
		reason      string
		url, secret string
		want        string // substring of the problem; "" for none
	}{
		{reason: "a tenant as the audit log manager writes it", url: "https://auditlog.example/v1", secret: "al-0001-w"},
		{reason: "a port and a dotted Secret name", url: "https://auditlog.example:8443", secret: "al.0001-w"},
		{reason: "plain http", url: "http://auditlog.example", secret: "al-w", want: "is not an https URL"},
		{reason: "upper-case scheme is no way around it", url: "HTTPS://auditlog.example", secret: "al-w"},
		{reason: "no scheme", url: "auditlog.example/v1", secret: "al-w", want: "is not an https URL"},
		{reason: "another scheme", url: "file:///etc/passwd", secret: "al-w", want: "is not an https URL"},
		{reason: "no host", url: "https:///v1", secret: "al-w", want: "names no host"},
		{reason: "user information", url: "https://user:secret@auditlog.example", secret: "al-w", want: "carries user information"},
		{reason: "not a URL", url: "https://audit log.example", secret: "al-w", want: "is not a URL"},
		{reason: "a URL over the schema's length", url: "https://" + long + ".example", secret: "al-w", want: "longer than 128"},
		{reason: "a Secret name with upper case", url: "https://al.example", secret: "Al-W", want: "gardenerSecretName"},
		{reason: "a Secret name with a slash", url: "https://al.example", secret: "../kube-system/x", want: "gardenerSecretName"},
		{reason: "a Secret name ending in a dash", url: "https://al.example", secret: "al-", want: "gardenerSecretName"},
		{reason: "an empty label", url: "https://al.example", secret: "al..w", want: "gardenerSecretName"},
		{reason: "a Secret name over the schema's length", url: "https://al.example", secret: long, want: "longer than 128"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			ten := tenant("t1", func(x *Tenant) { x.ServiceURL, x.SecretName = tc.url, tc.secret })
			got := ten.ConfigProblem()
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Fatalf("ConfigProblem() = %q, want %q", got, tc.want)
			}
			if free := ten.Free("eu-central-1"); free != (tc.want == "") {
				t.Errorf("Free = %v: a tenant is free exactly when its values may reach a shoot", free)
			}
			if strings.Contains(got, "secret@") {
				t.Errorf("the problem repeats a password: %q", got)
			}
		})
	}
}

// TestDecideClaimSkipsInvalidTenants: a runtime never reserves a tenant whose values must not reach a shoot; with
// only such tenants the pool is empty for it.
func TestDecideClaimSkipsInvalidTenants(t *testing.T) {
	bad := tenant("a-bad", func(x *Tenant) { x.ServiceURL = "http://auditlog.example" })
	d := DecideClaim(Request{RuntimeID: "rt-1", Region: "eu-central-1", Enabled: true}, []Tenant{bad})
	if !d.PoolEmpty || d.Action != ActionNone {
		t.Fatalf("only an http tenant: %+v, want the pool empty", d)
	}
	d = DecideClaim(Request{RuntimeID: "rt-1", Region: "eu-central-1", Enabled: true}, []Tenant{bad, tenant("b-good")})
	if d.Action != ActionReserve || d.Tenant.Name != "b-good" {
		t.Fatalf("%+v, want b-good reserved", d)
	}
	if s := Count([]Tenant{bad}); s.Unusable != 1 || s.Free != 0 {
		t.Errorf("Count = %+v, want the invalid tenant unusable", s)
	}
}
