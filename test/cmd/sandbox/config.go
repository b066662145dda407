package main

import (
	"github.com/kyma-project/kim/operator/config"
	"github.com/kyma-project/kim/test/sandbox/catalogue"
)

// sandboxConfig is the operator configuration that matches the seeded catalogue: its project, the cloud profile
// names it creates and a Kubernetes version and image it offers. The deletion window comes from the sandbox's
// --deletion-grace-period (short by default) so a deleted runtime's cluster disappears while one watches.
func sandboxConfig(c catalogue.Catalogue) *config.OperatorConfig {
	cfg := &config.OperatorConfig{
		APIVersion: config.APIVersion,
		Kind:       config.Kind,
		Gardener:   config.GardenerConfig{Project: c.Project},
		Shoot: config.ShootConfig{
			DefaultKubernetesVersion: "1.33",
			DefaultMachineImage:      config.MachineImage{Name: "gardenlinux"},
			// A GDCH runtime (KEB's gdch plan) needs the network its subnets are carved from; nothing checks it here.
			GDCH: config.GDCHConfig{ParentReference: config.GDCHParentReference{Name: "kyma-subnet", Namespace: "platform"}},
		},
	}
	cfg.Default()
	return cfg
}
