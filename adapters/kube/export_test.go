package kube

// TestKubeconfig is testKubeconfig for the external tests (package kube_test): a kubeconfig of server with an
// inline token.
var TestKubeconfig = testKubeconfig
