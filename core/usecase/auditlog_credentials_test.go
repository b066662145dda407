package usecase_test

import (
	"strings"
	"testing"

	"github.com/kyma-project/kim/core/domain/auditlog"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/core/usecase"
)

// TestAuditLogCopiesOnlyOptedInCredentials: the AuditLog names the Secret copied into its runtime, so whoever may
// write an AuditLog could name any Secret the operator may read. Another runtime's admin kubeconfig, the operator's
// Gardener credentials, a Secret of another namespace and a Secret without the pool's opt-in (or with another
// tenant's) are refused with a warning event and nothing is written into the runtime; the opted-in Secret is copied.
func TestAuditLogCopiesOnlyOptedInCredentials(t *testing.T) {
	secret := map[string][]byte{"kubeconfig": []byte("cluster-admin of someone else")}
	optIn := map[string]string{auditlog.LabelReadCredentials: "a"}
	for _, tc := range []struct {
		reason string
		ref    auditlog.SecretRef
		labels map[string]string
		want   auditlog.CredentialsReason
		// unread: refused by its place alone, before it is read (the KCP's audit log shows no read of it)
		unread bool
	}{
		{"another runtime's admin kubeconfig", auditlog.SecretRef{Namespace: modelNamespace, Name: "kubeconfig-rt-2"}, optIn, auditlog.CredentialsKubeconfig, true},
		{"the operator's Gardener credentials", auditlog.SecretRef{Namespace: modelNamespace, Name: "kim-gardener-kubeconfig"}, optIn, auditlog.CredentialsOperatorSecret, true},
		{"a Secret of another namespace", auditlog.SecretRef{Namespace: "kube-system", Name: "a-read"}, optIn, auditlog.CredentialsOtherNamespace, true},
		{"a Secret without the opt-in", auditlog.SecretRef{Namespace: modelNamespace, Name: "db-credentials"}, nil, auditlog.CredentialsNotOptedIn, false},
		{"another tenant's read credentials", auditlog.SecretRef{Namespace: modelNamespace, Name: "b-read"},
			map[string]string{auditlog.LabelReadCredentials: "b"}, auditlog.CredentialsNotOptedIn, false},
		{"the tenant's opted-in read credentials", auditlog.SecretRef{Namespace: modelNamespace, Name: "a-read"}, optIn, "", false},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			a := poolTenant("a")
			a.AssignedTo, a.State, a.ReadCredentials = "rt-1", auditlog.StateAssigned, tc.ref
			w := newKeeperWorld(a)
			w.runtimes.Set("rt-1", ports.AuditLogOwner{Enabled: true, Provisioned: true, ShootName: "c-rt-1"})
			w.kcp.SetLabelled(tc.ref, tc.labels, secret)
			res := w.keep(t, "a")
			_, copied := w.writer.Secret("rt-1", usecase.AuditLogCredentialsNamespace, usecase.AuditLogCredentialsName)
			if tc.want == "" {
				if !copied || len(res.Events) != 1 || res.Events[0].Reason != usecase.EventAuditLogCredentialsCopied {
					t.Fatalf("not copied: %+v", res.Events)
				}
				return
			}
			if copied || w.writer.Writes != 0 {
				t.Fatalf("%s/%s was copied into the runtime", tc.ref.Namespace, tc.ref.Name)
			}
			if tc.unread && w.kcp.Reads != 0 {
				t.Errorf("%s/%s was read before it was refused", tc.ref.Namespace, tc.ref.Name)
			}
			if len(res.Events) != 1 || !res.Events[0].Warning || res.Events[0].Reason != usecase.EventAuditLogCredentialsRefused ||
				!strings.HasPrefix(res.Events[0].Message, string(tc.want)+":") {
				t.Fatalf("events %+v, want one warning %s starting with %s", res.Events, usecase.EventAuditLogCredentialsRefused, tc.want)
			}
		})
	}
}
