package app

import (
	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/ports"
)

// Override replaces an adapter as the composition root builds the controllers' Deps: tests count or fail Gardener
// calls, move a fake clock, record what reaches the runtimes. The production binary passes none.
type Override func(*replacements)

// replacements are the test seams of the composition root: each, when set, takes the place of the adapter it
// names in every Deps that adapter goes into.
type replacements struct {
	clock          ports.Clock
	issuer         ports.KubeconfigIssuer
	runtimeClients kube.RuntimeClientFactory
	configurator   func(ports.RuntimeConfigurator) ports.RuntimeConfigurator
}

// WithClock replaces the wall clock every controller decides on.
func WithClock(c ports.Clock) Override {
	return func(r *replacements) { r.clock = c }
}

// WithIssuer replaces the Gardener kubeconfig issuer.
func WithIssuer(issuer ports.KubeconfigIssuer) Override {
	return func(r *replacements) { r.issuer = issuer }
}

// WithRuntimeClients replaces how the self-service adapters (the registry cache source, the audit log Secret
// writer) make clients of runtimes; the landscape's limits stay.
func WithRuntimeClients(clients kube.RuntimeClientFactory) Override {
	return func(r *replacements) { r.runtimeClients = clients }
}

// WithConfigurator wraps the Runtime controller's configurator of the objects inside runtimes.
func WithConfigurator(wrap func(ports.RuntimeConfigurator) ports.RuntimeConfigurator) Override {
	return func(r *replacements) { r.configurator = wrap }
}
