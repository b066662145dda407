// Package shootstate is the domain view of a runtime's Gardener shoot as the operator observes it: whether it exists,
// how far Gardener got (last operation, error codes), hibernation, deletion, and the marks the operator itself put on
// it (owner runtime, applied generation, pending-deletion record). The Gardener adapter builds these values from
// core.gardener.cloud/v1beta1 Shoots; the lifecycle and deletion policies decide on them. Standard library only.
package shootstate
