package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/operator/config"
)

// landscapeFlags say where the operator configuration of the landscape comes from, and so the Gardener project:
// restore and migrate read it the same way (the operator's ConfigMap in the KCP namespace by default).
type landscapeFlags struct {
	project, configFile, configMap string
}

// bindLandscapeFlags registers --gardener-project, --config and --config-map.
func bindLandscapeFlags(fs *pflag.FlagSet) *landscapeFlags {
	l := &landscapeFlags{}
	fs.StringVar(&l.project, "gardener-project", "", "Gardener project (default: gardener.project of the operator configuration)")
	fs.StringVar(&l.configFile, "config", "", "operator configuration file; default: the operator's ConfigMap (--config-map)")
	fs.StringVar(&l.configMap, "config-map", "kim-manager-config", "ConfigMap (key config.yaml) with the operator configuration, in the KCP namespace")
	return l
}

// load reads the operator configuration from --config or the operator's ConfigMap in KCP, with --gardener-project
// taking precedence over its gardener.project.
func (l *landscapeFlags) load(ctx context.Context, kcp client.Client, namespace string) (*config.OperatorConfig, error) {
	cfg, err := loadOperatorConfig(ctx, kcp, namespace, l.configFile, l.configMap)
	if err != nil {
		return nil, err
	}
	if l.project != "" {
		cfg.Gardener.Project = l.project
	}
	if cfg.Gardener.Project == "" {
		return nil, errors.New("no Gardener project: set gardener.project in the operator configuration or --gardener-project")
	}
	return cfg, nil
}

// loadOperatorConfig reads the operator configuration from a file or the operator's ConfigMap in KCP.
func loadOperatorConfig(ctx context.Context, kcp client.Client, namespace, file, configMap string) (*config.OperatorConfig, error) {
	if file != "" {
		return config.Load(file)
	}
	cm := &corev1.ConfigMap{}
	if err := kcp.Get(ctx, client.ObjectKey{Namespace: namespace, Name: configMap}, cm); err != nil {
		return nil, fmt.Errorf("read the operator configuration from ConfigMap %s/%s (or give --config): %w", namespace, configMap, err)
	}
	data, ok := cm.Data["config.yaml"]
	if !ok {
		return nil, fmt.Errorf("ConfigMap %s/%s has no key config.yaml", namespace, configMap)
	}
	cfg, err := config.Parse([]byte(data))
	if err != nil {
		return nil, fmt.Errorf("operator configuration in ConfigMap %s/%s: %w", namespace, configMap, err)
	}
	return cfg, nil
}

// bindOutputFlag registers -o/--output for a command's report.
func bindOutputFlag(fs *pflag.FlagSet) *string {
	output := fs.StringP("output", "o", "text", "report format: text, json or yaml")
	return output
}
