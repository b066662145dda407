// Package ports declares the interfaces the domain needs from the outside world (Gardener, Kubernetes Secrets,
// access inside runtime clusters, the clock). Each interface documents its contract: idempotency, what "not found"
// means and whether a call blocks. Adapters in adapters/ implement them; adapters/fake holds in-memory versions.
package ports
