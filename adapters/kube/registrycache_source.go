package kube

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/registrycache"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/ports"
)

// RegistryCacheConfigGVK is the customer's RegistryCacheConfig as the registry-cache module installs it.
var RegistryCacheConfigGVK = schema.GroupVersionKind{Group: "core.kyma-project.io", Version: "v1beta1", Kind: "RegistryCacheConfig"}

// RegistryCacheSource implements ports.RegistryCacheSource on the runtimes' API servers. The module's types are not
// imported: objects are read and written unstructured, by the field names the module defines.
//
// The customer owns the runtime's API server (and can serve RegistryCacheConfigs from an aggregated API server of
// their own), so the list is bounded in every dimension they control: pages of registrycache.PageSize objects, at
// most Limits.MaxConfigs objects and registrycache.MaxPages pages, at most Limits.MaxListBytes of response bodies
// (counted on the wire by the transport RuntimeClients installs, before client-go holds a body in memory)
// and ListTimeout for all pages together.
type RegistryCacheSource struct {
	// Clients makes the client of a runtime.
	Clients RuntimeClientFactory
	// GVK of RegistryCacheConfig; zero: RegistryCacheConfigGVK.
	GVK schema.GroupVersionKind
	// Limits bound the list of one runtime; unset ones: registrycache's defaults.
	Limits registrycache.Limits
	// ListTimeout bounds the list of one runtime, all pages; zero: DefaultRegistryCacheListTimeout.
	ListTimeout time.Duration
}

// DefaultRegistryCacheListTimeout bounds the list of one runtime's RegistryCacheConfigs, all pages and client-go's
// retries together: a slow API server holds one sync worker for at most this long.
const DefaultRegistryCacheListTimeout = time.Minute

var _ ports.RegistryCacheSource = (*RegistryCacheSource)(nil)

func (s *RegistryCacheSource) gvk() schema.GroupVersionKind {
	if s.GVK.Empty() {
		return RegistryCacheConfigGVK
	}
	return s.GVK
}

// Configs implements ports.RegistryCacheSource: a paginated list within Limits and ListTimeout.
func (s *RegistryCacheSource) Configs(ctx context.Context, runtimeID string) ([]registrycache.Config, error) {
	c, err := s.Clients(ctx, runtimeID)
	if err != nil {
		return nil, err
	}
	lim := s.Limits.OrDefaults()
	ctx, cancel := context.WithTimeout(ctx, cmp.Or(s.ListTimeout, DefaultRegistryCacheListTimeout))
	defer cancel()
	budget := &responseBudget{max: lim.MaxListBytes}
	ctx = withResponseBudget(ctx, budget)
	pageSize, maxPages := registrycache.PageSize(lim.MaxConfigs), registrycache.MaxPages(lim.MaxConfigs)
	var out []registrycache.Config
	next := ""
	for page := 1; ; page++ {
		if page > maxPages {
			return out, lim.Endless(maxPages)
		}
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(s.gvk().GroupVersion().WithKind(s.gvk().Kind + "List"))
		err := c.List(ctx, list, client.Limit(pageSize), client.Continue(next))
		switch {
		case errors.Is(err, errResponseBudget):
			return out, lim.TooLarge()
		case page == 1 && (meta.IsNoMatchError(err) || apierrors.IsNotFound(err)):
			// The module is not installed (yet): no objects. Only on the first page: a list that breaks off later
			// is no proof that the objects are gone.
			return nil, nil
		case err != nil:
			return nil, runtimeError("list RegistryCacheConfigs", runtimeID, err)
		}
		if !budget.counted() {
			// A client without budgetTransport (not made by RuntimeClients): the bound holds on what was
			// decoded instead, after the fact.
			budget.add(approxJSONSize(list.Object)) // the list's own fields (its continue token); items below
			for i := range list.Items {
				budget.add(approxJSONSize(list.Items[i].Object))
			}
		}
		if budget.exceeded() {
			return out, lim.TooLarge()
		}
		for i := range list.Items {
			if len(out) == lim.MaxConfigs {
				return out, lim.TooMany()
			}
			out = append(out, configOf(&list.Items[i]))
		}
		if next = list.GetContinue(); next == "" {
			return out, nil
		}
	}
}

// approxJSONSize is about the size of v encoded as JSON (numbers count 8 bytes): what a decoded object took on
// the wire, for clients whose responses were not counted.
func approxJSONSize(v any) int64 {
	switch x := v.(type) {
	case map[string]any:
		n := int64(2)
		for k, e := range x {
			n += int64(len(k)) + 4 + approxJSONSize(e)
		}
		return n
	case []any:
		n := int64(2)
		for _, e := range x {
			n += 1 + approxJSONSize(e)
		}
		return n
	case string:
		return int64(len(x)) + 2
	}
	return 8
}

// configOf maps an object; fields of the wrong type read as unset, which validation then reports.
func configOf(u *unstructured.Unstructured) registrycache.Config {
	str := func(path ...string) string {
		v, _, _ := unstructured.NestedFieldNoCopy(u.Object, append([]string{"spec"}, path...)...)
		switch x := v.(type) {
		case string:
			return x
		case int64:
			return strconv.FormatInt(x, 10)
		case float64:
			return strconv.FormatFloat(x, 'f', -1, 64)
		}
		return ""
	}
	c := registrycache.Config{Namespace: u.GetNamespace(), Name: u.GetName(), UID: string(u.GetUID()), Generation: u.GetGeneration(),
		CreatedAt: u.GetCreationTimestamp().Time, SecretName: str("secretReferenceName"),
		Cache: shoot.RegistryCache{Upstream: str("upstream"), RemoteURL: str("remoteURL"), VolumeSize: str("volume", "size"),
			VolumeStorageClass: str("volume", "storageClassName"), GarbageCollectionTTL: str("garbageCollection", "ttl"),
			HTTPProxy: str("proxy", "httpProxy"), HTTPSProxy: str("proxy", "httpsProxy")}}
	if tls, found, err := unstructured.NestedBool(u.Object, "spec", "http", "tls"); found && err == nil {
		c.Cache.TLS = &tls
	}
	c.Status.State, _, _ = unstructured.NestedString(u.Object, "status", "state")
	if cond := findCondition(u); cond != nil {
		c.Status.ConditionStatus, c.Status.Reason, c.Status.Message = string(cond.Status), registrycache.Reason(cond.Reason), cond.Message
		c.Status.ObservedGeneration = cond.ObservedGeneration
	}
	return c
}

func findCondition(u *unstructured.Unstructured) *metav1.Condition {
	conds := conditionsOf(u)
	return meta.FindStatusCondition(conds, registrycache.ConditionType)
}

func conditionsOf(u *unstructured.Unstructured) []metav1.Condition {
	raw, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var out []metav1.Condition
	for _, r := range raw {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		var c metav1.Condition
		if err := fromUnstructured(m, &c); err == nil {
			out = append(out, c)
		}
	}
	return out
}

// Credentials implements ports.RegistryCacheSource. The Secret's data is returned, never logged.
func (s *RegistryCacheSource) Credentials(ctx context.Context, runtimeID string, key registrycache.Key) (registrycache.Credentials, error) {
	c, err := s.Clients(ctx, runtimeID)
	if err != nil {
		return registrycache.Credentials{}, err
	}
	sec := &corev1.Secret{}
	err = c.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: key.Name}, sec)
	if apierrors.IsNotFound(err) {
		return registrycache.Credentials{}, nil
	}
	if err != nil {
		return registrycache.Credentials{}, runtimeError("get Secret "+key.String(), runtimeID, err)
	}
	return registrycache.Credentials{Found: true, Data: sec.Data}, nil
}

// SetStatus implements ports.RegistryCacheSource: a merge patch of the status subresource, preconditioned on the
// resourceVersion of the object read at the observed generation. Other conditions are kept.
func (s *RegistryCacheSource) SetStatus(ctx context.Context, runtimeID string, cfg registrycache.Config, st registrycache.Status, now time.Time) error {
	c, err := s.Clients(ctx, runtimeID)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(s.gvk())
	err = c.Get(ctx, client.ObjectKey{Namespace: cfg.Namespace, Name: cfg.Name}, u)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return runtimeError("get RegistryCacheConfig "+cfg.Key().String(), runtimeID, err)
	case u.GetGeneration() != cfg.Generation || string(u.GetUID()) != cfg.UID:
		return fmt.Errorf("RegistryCacheConfig %s changed since it was read: %w", cfg.Key(), ports.ErrConflict)
	}
	conds := conditionsOf(u)
	meta.SetStatusCondition(&conds, metav1.Condition{Type: registrycache.ConditionType, Status: metav1.ConditionStatus(st.ConditionStatus),
		Reason: string(st.Reason), Message: st.Message, ObservedGeneration: st.ObservedGeneration, LastTransitionTime: metav1.NewTime(now)})
	rawConds := make([]any, 0, len(conds))
	for i := range conds {
		m, err := toUnstructured(&conds[i])
		if err != nil {
			return fmt.Errorf("encode condition: %w", err)
		}
		rawConds = append(rawConds, m)
	}
	patch := map[string]any{
		"metadata": map[string]any{"resourceVersion": u.GetResourceVersion()},
		"status":   map[string]any{"state": st.State, "conditions": rawConds},
	}
	p, err := rawMergePatch(patch)
	if err != nil {
		return err
	}
	err = c.Status().Patch(ctx, u, p)
	switch {
	case apierrors.IsConflict(err):
		return fmt.Errorf("RegistryCacheConfig %s changed since it was read: %w", cfg.Key(), ports.ErrConflict)
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return runtimeError("write the status of RegistryCacheConfig "+cfg.Key().String(), runtimeID, err)
	}
	return nil
}
