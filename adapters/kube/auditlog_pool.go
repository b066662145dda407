package kube

import (
	"context"
	"fmt"
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

// The pool contract: what the operator reads and writes on an AuditLog (docs/audit-log-access.md).
const (
	// LabelReservedFor names the runtime that started to claim the tenant.
	LabelReservedFor = "reserved-for-runtime-id"
	// LabelOrphaned marks a released tenant ("true") for the landscape's cleanup.
	LabelOrphaned = "infrastructuremanager.kyma-project.io/orphaned"
	// AnnotationReservedAt, AnnotationClaimedShoot and AnnotationOrphanedAt record when and for which cluster.
	AnnotationReservedAt   = "infrastructuremanager.kyma-project.io/reserved-at"
	AnnotationClaimedShoot = "infrastructuremanager.kyma-project.io/shoot-name"
	AnnotationOrphanedAt   = "infrastructuremanager.kyma-project.io/orphaned-at"
)

// AuditLogPool implements ports.AuditLogPool on AuditLog resources in the KCP, unstructured (the operator does not
// own their API). Every write is one merge patch carrying the observed resourceVersion: the API server applies it
// only to that version, so of two concurrent writers exactly one wins.
type AuditLogPool struct {
	// Cache serves ReadCached (nil: Live serves both); Live asks the API server; Writer writes.
	Cache, Live client.Reader
	Writer      client.Writer
	// GVK of the AuditLog resource; zero: AuditLogGVK.
	GVK schema.GroupVersionKind
	// Namespace of a namespaced pool; "" for a cluster-scoped one.
	Namespace string
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
	spec := func(path ...string) string {
		v, _, _ := unstructured.NestedString(u.Object, append([]string{"spec"}, path...)...)
		return v
	}
	t := auditlog.Tenant{Name: TenantName(u.GetNamespace(), u.GetName()), Version: u.GetResourceVersion(),
		AssignedTo: spec("assignedToRuntimeID"), ReservedFor: u.GetLabels()[LabelReservedFor],
		Orphaned: u.GetLabels()[LabelOrphaned] == "true", ShootName: u.GetAnnotations()[AnnotationClaimedShoot],
		Provider: spec("provider"), Region: spec("region"), TenantID: spec("tenantID"), ServiceURL: spec("serviceURL"),
		SecretName:      spec("credentialsSecretName"),
		ReadCredentials: auditlog.SecretRef{Namespace: spec("readCredentialsSecretRef", "namespace"), Name: spec("readCredentialsSecretRef", "name")}}
	if t.ReadCredentials.Namespace == "" {
		t.ReadCredentials.Namespace = u.GetNamespace()
	}
	if at, err := time.Parse(time.RFC3339, u.GetAnnotations()[AnnotationReservedAt]); err == nil {
		t.ReservedAt = at
	}
	return t
}

// Reserve implements ports.AuditLogPool.
func (p *AuditLogPool) Reserve(ctx context.Context, t auditlog.Tenant, runtimeID string, at time.Time) (auditlog.Tenant, error) {
	return p.patch(ctx, "reserve", t, map[string]any{
		"metadata": map[string]any{"labels": map[string]any{LabelReservedFor: runtimeID},
			"annotations": map[string]any{AnnotationReservedAt: at.UTC().Format(time.RFC3339)}},
	})
}

// Claim implements ports.AuditLogPool.
func (p *AuditLogPool) Claim(ctx context.Context, t auditlog.Tenant, runtimeID, shootName string) (auditlog.Tenant, error) {
	return p.patch(ctx, "claim", t, map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{AnnotationClaimedShoot: shootName}},
		"spec":     map[string]any{"assignedToRuntimeID": runtimeID},
	})
}

// Unreserve implements ports.AuditLogPool.
func (p *AuditLogPool) Unreserve(ctx context.Context, t auditlog.Tenant) error {
	_, err := p.patch(ctx, "unreserve", t, map[string]any{
		"metadata": map[string]any{"labels": map[string]any{LabelReservedFor: nil}, "annotations": map[string]any{AnnotationReservedAt: nil}},
	})
	return err
}

// Release implements ports.AuditLogPool.
func (p *AuditLogPool) Release(ctx context.Context, t auditlog.Tenant, at time.Time) error {
	_, err := p.patch(ctx, "release", t, map[string]any{
		"metadata": map[string]any{"labels": map[string]any{LabelOrphaned: "true"},
			"annotations": map[string]any{AnnotationOrphanedAt: at.UTC().Format(time.RFC3339)}},
	})
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
