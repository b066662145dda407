// Package kubeconfig holds the pure rules of kubeconfig management: when a GardenerCluster's admin kubeconfig must be
// issued (the rotation policy) and how the kubeconfig Secret is labelled and annotated (the Secret format consumers
// rely on). It reads no clock: every decision takes `now`.
package kubeconfig
