package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/ports"
)

// Data keys of the KCP ConfigMap with the control plane's egress addresses, as the previous infrastructure manager
// read them: a JSON list of CIDRs (the operators' addresses) and a JSON string or list (KCP's external NAT).
const (
	OperatorCIDRsKey = "acl-list.json"
	KCPEgressKey     = "kcp-external-nat-ip.json"
)

// ControlPlaneAddresses implements ports.ControlPlaneAddresses with a KCP ConfigMap.
type ControlPlaneAddresses struct {
	// Reader reads the ConfigMap (a cache that watches it is what makes changes re-apply ACLs).
	Reader client.Reader
	// Key names the ConfigMap.
	Key client.ObjectKey
}

var _ ports.ControlPlaneAddresses = (*ControlPlaneAddresses)(nil)

// EgressCIDRs implements ports.ControlPlaneAddresses.
func (a *ControlPlaneAddresses) EgressCIDRs(ctx context.Context) ([]string, error) {
	cm := &corev1.ConfigMap{}
	err := a.Reader.Get(ctx, a.Key, cm)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read ConfigMap %s: %w: %w", a.Key, ports.ErrTransient, err)
	}
	cidrs, err := ParseControlPlaneAddresses(cm.Data)
	if err != nil {
		return nil, fmt.Errorf("ConfigMap %s: %w", a.Key, err)
	}
	return cidrs, nil
}

// ParseControlPlaneAddresses reads the CIDRs of the ConfigMap data: every value of OperatorCIDRsKey and
// KCPEgressKey (a JSON list of strings or a JSON string), in that order, without duplicates. Other keys are
// ignored. An address that is not a CIDR is an error wrapping ports.ErrAddressesInvalid: a silently shortened list
// would lock the control plane out.
func ParseControlPlaneAddresses(data map[string]string) ([]string, error) {
	var out []string
	keys := []string{OperatorCIDRsKey, KCPEgressKey}
	for _, key := range keys {
		v, ok := data[key]
		if !ok || v == "" {
			continue
		}
		var list []string
		if err := json.Unmarshal([]byte(v), &list); err != nil {
			var single string
			if err := json.Unmarshal([]byte(v), &single); err != nil {
				return nil, fmt.Errorf("key %s: %w: want a JSON list of CIDRs or a JSON string", key, ports.ErrAddressesInvalid)
			}
			list = []string{single}
		}
		for _, c := range list {
			p, err := netip.ParsePrefix(c)
			if err != nil {
				return nil, fmt.Errorf("key %s: %w: %q is not a CIDR", key, ports.ErrAddressesInvalid, c)
			}
			if s := p.Masked().String(); !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out, nil
}

// NewControlPlaneAddressesCache returns a cache that holds exactly the ConfigMap key names, and nothing else of
// KCP's ConfigMaps; its informer is what announces changes. The caller starts it (e.g. mgr.Add).
func NewControlPlaneAddressesCache(cfg *rest.Config, scheme *runtime.Scheme, key client.ObjectKey) (cache.Cache, error) {
	c, err := cache.New(cfg, cache.Options{Scheme: scheme, ByObject: map[client.Object]cache.ByObject{
		&corev1.ConfigMap{}: {
			Namespaces: map[string]cache.Config{key.Namespace: {}},
			Field:      fields.OneTermEqualSelector("metadata.name", key.Name),
		},
	}})
	if err != nil {
		return nil, fmt.Errorf("cache for ConfigMap %s: %w", key, err)
	}
	return c, nil
}
