package auditlog

import (
	"fmt"
	"net/url"
	"strings"
)

// MaxConfigLength is the longest spec.config string the audit log manager's schema allows (PEERS.md §2); the
// operator refuses longer ones too, whatever schema a pool's CRD has.
const MaxConfigLength = 128

// ConfigProblem tells what is wrong with the tenant's values that reach a shoot ("" when nothing is): the service
// URL must be an absolute https URL with a host and no user information (the audit log extension sends the
// tenant's credentials to it), and the write credentials Secret a DNS-1123 subdomain (a Secret name in the Gardener
// project), each at most MaxConfigLength characters. The AuditLog resources are written by the landscape's audit
// log manager; a tenant it wrote wrongly (or someone else able to write AuditLogs) is never handed to a runtime
// (Free) and a runtime holding one waits (lifecycle.ReasonAuditLogTenantInvalid) instead of getting it.
func (t Tenant) ConfigProblem() string {
	var problems []string
	if p := serviceURLProblem(t.ServiceURL); p != "" {
		problems = append(problems, "spec.config.serviceURL "+p)
	}
	if p := secretNameProblem(t.SecretName); p != "" {
		problems = append(problems, "spec.config.gardenerSecretName "+p)
	}
	return strings.Join(problems, "; ")
}

func serviceURLProblem(s string) string {
	if len(s) > MaxConfigLength {
		return fmt.Sprintf("is longer than %d characters", MaxConfigLength)
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return fmt.Sprintf("%q is not a URL", s)
	case u.Scheme != "https":
		return fmt.Sprintf("%q is not an https URL", s)
	case u.Hostname() == "":
		return fmt.Sprintf("%q names no host", s)
	case u.User != nil:
		return fmt.Sprintf("%q carries user information", redactUser(u))
	}
	return ""
}

// redactUser shows a URL without the password its user information may carry.
func redactUser(u *url.URL) string {
	c := *u
	c.User = url.User("…")
	return c.String()
}

func secretNameProblem(s string) string {
	if len(s) > MaxConfigLength {
		return fmt.Sprintf("is longer than %d characters", MaxConfigLength)
	}
	if !dns1123Subdomain(s) {
		return fmt.Sprintf("%q is not a Secret name (a DNS-1123 subdomain: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit)", s)
	}
	return ""
}

// dns1123Subdomain is Kubernetes' rule for object names (IsDNS1123Subdomain): labels of [a-z0-9-] that start and
// end with [a-z0-9], joined by dots, at most 253 characters.
func dns1123Subdomain(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || !alnum(label[0]) || !alnum(label[len(label)-1]) {
			return false
		}
		for i := 0; i < len(label); i++ {
			if c := label[i]; !alnum(c) && c != '-' {
				return false
			}
		}
	}
	return true
}

func alnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
