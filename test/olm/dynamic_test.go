package olm_test

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// dynamicClient reads objects of any kind OLM installs, the CRDs it created a moment ago included (the mapper asks
// the API server on every miss).
type dynamicClient struct {
	dynamic.Interface
	mapper meta.RESTMapper
}

func newDynamic(cfg *rest.Config) (*dynamicClient, error) {
	d, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("discovery client: %w", err)
	}
	return &dynamicClient{Interface: d, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))}, nil
}

func (d *dynamicClient) resource(gvk schema.GroupVersionKind, ns string) (dynamic.ResourceInterface, error) {
	m, err := d.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", gvk, err)
	}
	if m.Scope.Name() == meta.RESTScopeNameRoot {
		return d.Resource(m.Resource), nil
	}
	return d.Resource(m.Resource).Namespace(ns), nil
}

// get fetches one object (ns is ignored for cluster-scoped kinds).
func (d *dynamicClient) get(ctx context.Context, gvk schema.GroupVersionKind, ns, name string) error {
	r, err := d.resource(gvk, ns)
	if err != nil {
		return err
	}
	_, err = r.Get(ctx, name, metav1.GetOptions{})
	return err
}

// count counts the objects matching opts (ns is ignored for cluster-scoped kinds).
func (d *dynamicClient) count(ctx context.Context, gvk schema.GroupVersionKind, ns string, opts metav1.ListOptions) (int, error) {
	r, err := d.resource(gvk, ns)
	if err != nil {
		return 0, err
	}
	list, err := r.List(ctx, opts)
	if err != nil {
		return 0, err
	}
	return len(list.Items), nil
}
