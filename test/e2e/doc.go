// Package e2e holds the end-to-end tests of the operator: the real manager (app.NewManager with every
// controller) against garden-in-a-box (KCP and the real gardener-apiserver in-process, the simulated gardenlet and
// runtime API servers), driven with Runtimes shaped as KEB sends them. The package has no production code; the
// tests skip under -short and need KUBEBUILDER_ASSETS (see hack/envtest.sh).
package e2e
