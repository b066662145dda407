package kube

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/auditlog"
	"github.com/kyma-project/kim/core/ports"
)

// AuditLogGVK is the AuditLog resource of the landscape's audit log pool.
var AuditLogGVK = schema.GroupVersionKind{Group: "auditlogmanager.kyma-project.io", Version: "v1beta1", Kind: "AuditLog"}

// The reservation labels, as the previous infrastructure manager sets them (docs/audit-log-access.md). Everything
// else the operator writes on an AuditLog is a field of the audit log manager's schema (spec.assignedToRuntimeID,
// spec.orphaned).
const (
	// LabelReservedFor names the runtime that started to claim the tenant.
	LabelReservedFor = "reserved-for-runtime-id"
	// LabelReservedAt is when, in unix seconds.
	LabelReservedAt = "reserved-for-runtime-at"
)

// AuditLogPool implements ports.AuditLogPool on AuditLog resources in the KCP, unstructured (the operator does not
// own their API, and a typed copy would drop what a newer schema adds). Every write is one merge patch of exactly
// the fields the operator owns, carrying the observed resourceVersion: the API server applies it only to that
// version (as the previous manager's full Update with the read resourceVersion), so of two concurrent writers
// exactly one wins, and no field the operator does not own is ever sent back. Status is never written.
type AuditLogPool struct {
	// Cache serves ReadCached (nil: Live serves both); Live asks the API server; Writer writes.
	Cache, Live client.Reader
	Writer      client.Writer
	// GVK of the AuditLog resource; zero: AuditLogGVK.
	GVK schema.GroupVersionKind
	// Namespace of a namespaced pool; "" for a cluster-scoped one.
	Namespace string
	// CredentialsNamespace is where the read credentials of a cluster-scoped pool's tenants are (a namespaced
	// pool's are in its namespace).
	CredentialsNamespace string
}

var _ ports.AuditLogPool = (*AuditLogPool)(nil)

func (p *AuditLogPool) gvk() schema.GroupVersionKind {
	if p.GVK.Empty() {
		return AuditLogGVK
	}
	return p.GVK
}

// List implements ports.AuditLogPool.
func (p *AuditLogPool) List(ctx context.Context, mode ports.ReadMode) ([]auditlog.Tenant, error) {
	r := p.Live
	if mode == ports.ReadCached && p.Cache != nil {
		r = p.Cache
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(p.gvk().GroupVersion().WithKind(p.gvk().Kind + "List"))
	var opts []client.ListOption
	if p.Namespace != "" {
		opts = append(opts, client.InNamespace(p.Namespace))
	}
	if err := r.List(ctx, list, opts...); err != nil {
		return nil, transient("list the audit log pool", err)
	}
	out := make([]auditlog.Tenant, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, p.tenantOf(&list.Items[i]))
	}
	return out, nil
}

// TenantName is the name of an AuditLog in the pool: <namespace>/<name>, or <name> when cluster-scoped.
func TenantName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

func (p *AuditLogPool) tenantOf(u *unstructured.Unstructured) auditlog.Tenant {
	str := func(path ...string) string {
		v, _, _ := unstructured.NestedString(u.Object, path...)
		return v
	}
	regions, _, _ := unstructured.NestedStringSlice(u.Object, "spec", "regions")
	orphaned, _, _ := unstructured.NestedBool(u.Object, "spec", "orphaned")
	t := auditlog.Tenant{Name: TenantName(u.GetNamespace(), u.GetName()), Version: u.GetResourceVersion(),
		State: auditlog.State(str("status", "state")), AssignedTo: str("spec", "assignedToRuntimeID"),
		ReservedFor: u.GetLabels()[LabelReservedFor], Orphaned: orphaned, Regions: regions,
		TenantID: str("spec", "subaccountID"), ServiceURL: str("spec", "config", "serviceURL"),
		SecretName: str("spec", "config", "gardenerSecretName")}
	// The read credentials are named without a namespace: they are the pool's (for a cluster-scoped pool the
	// credentials policy's namespace decides, and an empty one refuses them).
	if name := str("spec", "config", "readCredsSecretName"); name != "" {
		t.ReadCredentials = auditlog.SecretRef{Namespace: p.credentialsNamespace(u), Name: name}
	}
	if sec, err := strconv.ParseInt(u.GetLabels()[LabelReservedAt], 10, 64); err == nil && sec > 0 {
		t.ReservedAt = time.Unix(sec, 0).UTC()
	}
	return t
}

func (p *AuditLogPool) credentialsNamespace(u *unstructured.Unstructured) string {
	if ns := u.GetNamespace(); ns != "" {
		return ns
	}
	return p.CredentialsNamespace
}

func reservation(runtimeID string, at time.Time) map[string]any {
	return map[string]any{LabelReservedFor: runtimeID, LabelReservedAt: strconv.FormatInt(at.Unix(), 10)}
}

// Reserve implements ports.AuditLogPool.
func (p *AuditLogPool) Reserve(ctx context.Context, t auditlog.Tenant, runtimeID string, at time.Time) (auditlog.Tenant, error) {
	return p.patch(ctx, "reserve", t, map[string]any{"metadata": map[string]any{"labels": reservation(runtimeID, at)}})
}

// Claim implements ports.AuditLogPool.
func (p *AuditLogPool) Claim(ctx context.Context, t auditlog.Tenant, runtimeID string, at time.Time) (auditlog.Tenant, error) {
	doc := map[string]any{"spec": map[string]any{"assignedToRuntimeID": runtimeID}}
	if t.ReservedFor != runtimeID {
		doc["metadata"] = map[string]any{"labels": reservation(runtimeID, at)}
	}
	return p.patch(ctx, "claim", t, doc)
}

// Unreserve implements ports.AuditLogPool.
func (p *AuditLogPool) Unreserve(ctx context.Context, t auditlog.Tenant) error {
	_, err := p.patch(ctx, "unreserve", t, map[string]any{
		"metadata": map[string]any{"labels": map[string]any{LabelReservedFor: nil, LabelReservedAt: nil}},
	})
	return err
}

// Release implements ports.AuditLogPool.
func (p *AuditLogPool) Release(ctx context.Context, t auditlog.Tenant) error {
	_, err := p.patch(ctx, "release", t, map[string]any{"spec": map[string]any{"orphaned": true}})
	return err
}

// patch writes doc to t if t still has t.Version.
func (p *AuditLogPool) patch(ctx context.Context, op string, t auditlog.Tenant, doc map[string]any) (auditlog.Tenant, error) {
	if t.Version == "" {
		return auditlog.Tenant{}, fmt.Errorf("%s audit log %s: no observed version to write on", op, t.Name)
	}
	md, _ := doc["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		doc["metadata"] = md
	}
	md["resourceVersion"] = t.Version
	patch, err := rawMergePatch(doc)
	if err != nil {
		return auditlog.Tenant{}, err
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(p.gvk())
	ns, name, found := strings.Cut(t.Name, "/")
	if !found {
		ns, name = "", t.Name
	}
	u.SetNamespace(ns)
	u.SetName(name)
	err = p.Writer.Patch(ctx, u, patch)
	switch {
	case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
		return auditlog.Tenant{}, fmt.Errorf("%s audit log %s: %w: %w", op, t.Name, ports.ErrConflict, err)
	case err != nil:
		return auditlog.Tenant{}, transient(op+" audit log "+t.Name, err)
	}
	return p.tenantOf(u), nil
}
