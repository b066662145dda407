package main

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/operator/config"
)

// loadConfigMap reads the operator configuration from key config.yaml of a ConfigMap in KCP and merges the overlays
// into it (the previous manager's converter configuration and flags, see config.ParseOverlaid). It is read once at
// start-up with a direct client (the manager's cache does not run yet); the installer owns the ConfigMap, so OLM
// upgrades never overwrite it. A missing ConfigMap or key, or a file that does not validate, stops the manager with
// a message naming the object and, for bad content, the key to fix.
func loadConfigMap(ctx context.Context, kcp *rest.Config, namespace, name string, overlays ...*config.Overlay) (*config.OperatorConfig, error) {
	c, err := client.New(kcp, client.Options{})
	if err != nil {
		return nil, fmt.Errorf("KCP client: %w", err)
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, cm); err != nil {
		return nil, fmt.Errorf("read the operator configuration from ConfigMap %s/%s: %w", namespace, name, err)
	}
	data, ok := cm.Data[configMapKey]
	if !ok {
		return nil, fmt.Errorf("ConfigMap %s/%s has no key %s with the operator configuration", namespace, name, configMapKey)
	}
	cfg, err := config.ParseOverlaid([]byte(data), overlays...)
	if err != nil {
		return nil, fmt.Errorf("operator configuration in ConfigMap %s/%s: %w", namespace, name, err)
	}
	return cfg, nil
}
