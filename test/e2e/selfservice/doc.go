// Package selfservice holds the end-to-end tests of the customer self-service features (registry caches from
// RegistryCacheConfig objects in runtimes, dedicated audit log tenants from the KCP pool): the real manager with
// every controller against garden-in-a-box with a runtime API server per shoot. It is a package of its own because
// garden-in-a-box runs once per test process, configured for these tests (a pool of tenants, a short deletion
// window). No production code; the tests skip under -short and need KUBEBUILDER_ASSETS (hack/envtest.sh).
package selfservice
