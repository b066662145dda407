package auditlog

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/domain/wire"
)

// LabelReadCredentials is the opt-in of the audit log pool: the operator copies a Secret of the KCP into a runtime
// as its audit log read credentials only when the Secret carries this label with the name of the AuditLog
// (metadata.name) it serves. The AuditLog names the Secret, but whoever may write an AuditLog must not be able to
// make the operator copy any Secret it may read (another runtime's admin kubeconfig, the operator's Gardener
// credentials) into a customer's cluster: the label is set by whoever creates the read credentials, next to them.
// Its value binds the Secret to one tenant, so an AuditLog cannot name another tenant's read credentials either.
const LabelReadCredentials = "infrastructuremanager.kyma-project.io/audit-log-read-credentials"

// ErrCredentialsRefused: the Secret a tenant names as its read credentials may not be copied into a runtime.
var ErrCredentialsRefused = errors.New("audit log read credentials refused")

// CredentialsReason says why read credentials were refused. Values never change meaning: people and alerts match
// on them.
type CredentialsReason string

// Reasons of CheckReadCredentials.
const (
	// CredentialsOtherNamespace: the Secret is not in the pool's namespace.
	CredentialsOtherNamespace CredentialsReason = "OtherNamespace"
	// CredentialsKubeconfig: the Secret is named like a runtime's admin kubeconfig (kubeconfig-*).
	CredentialsKubeconfig CredentialsReason = "KubeconfigSecret"
	// CredentialsOperatorSecret: the Secret is one of the operator's own (its Gardener credentials, anything it
	// manages).
	CredentialsOperatorSecret CredentialsReason = "OperatorSecret"
	// CredentialsNotOptedIn: the Secret lacks LabelReadCredentials, or the label names another tenant.
	CredentialsNotOptedIn CredentialsReason = "NotOptedIn"
)

// CredentialsRefusal is a refusal of CheckReadCredentials. It wraps ErrCredentialsRefused.
type CredentialsRefusal struct {
	Reason CredentialsReason
	Detail string
}

func (r *CredentialsRefusal) Error() string { return string(r.Reason) + ": " + r.Detail }

// Unwrap returns ErrCredentialsRefused.
func (r *CredentialsRefusal) Unwrap() error { return ErrCredentialsRefused }

// CredentialsPolicy is where read credentials may come from. The rule does not depend on how the AuditLog names the
// Secret: it judges the Secret.
type CredentialsPolicy struct {
	// Namespace is the one KCP namespace read credentials are copied from: the pool's (the operator's namespace
	// for a cluster-scoped pool). Empty: nothing is copied.
	Namespace string
	// OperatorSecrets are names of Secrets in that namespace the operator itself relies on and does not label (its
	// Gardener credentials); never copied, whatever their labels say.
	OperatorSecrets []string
}

// CheckReadCredentialsRef refuses a Secret by its place alone, before it is read: another namespace than the
// pool's, a kubeconfig-* name, one of the operator's own Secrets.
func (p CredentialsPolicy) CheckReadCredentialsRef(namespace, name string) error {
	switch {
	case p.Namespace == "" || namespace != p.Namespace:
		return &CredentialsRefusal{Reason: CredentialsOtherNamespace, Detail: fmt.Sprintf(
			"Secret %s/%s is not in the audit log pool's namespace %q", namespace, name, p.Namespace)}
	case strings.HasPrefix(name, kubeconfig.SecretNamePrefix):
		return &CredentialsRefusal{Reason: CredentialsKubeconfig, Detail: fmt.Sprintf(
			"Secret %s/%s is named like a runtime's admin kubeconfig (%s*)", namespace, name, kubeconfig.SecretNamePrefix)}
	case slices.Contains(p.OperatorSecrets, name):
		return &CredentialsRefusal{Reason: CredentialsOperatorSecret, Detail: fmt.Sprintf(
			"Secret %s/%s holds the operator's own credentials", namespace, name)}
	}
	return nil
}

// CheckReadCredentials decides whether the Secret namespace/name with labels may be copied into a runtime as the
// read credentials of the tenant named tenant (Tenant.Name: <namespace>/<name> or <name>). Beyond
// CheckReadCredentialsRef, a Secret the operator manages is refused, and the Secret must carry
// LabelReadCredentials naming the tenant's AuditLog. The error is a *CredentialsRefusal.
func (p CredentialsPolicy) CheckReadCredentials(tenant, namespace, name string, labels map[string]string) error {
	if err := p.CheckReadCredentialsRef(namespace, name); err != nil {
		return err
	}
	if labels[wire.LabelManagedBy] == wire.ManagedByValue {
		return &CredentialsRefusal{Reason: CredentialsOperatorSecret, Detail: fmt.Sprintf(
			"Secret %s/%s is managed by the operator (%s=%s)", namespace, name, wire.LabelManagedBy, wire.ManagedByValue)}
	}
	auditLog := tenant[strings.LastIndex(tenant, "/")+1:]
	if got, ok := labels[LabelReadCredentials]; !ok || got != auditLog {
		return &CredentialsRefusal{Reason: CredentialsNotOptedIn, Detail: fmt.Sprintf(
			"Secret %s/%s does not carry the label %s=%s (the opt-in of the audit log pool for AuditLog %s)",
			namespace, name, LabelReadCredentials, auditLog, tenant)}
	}
	return nil
}
