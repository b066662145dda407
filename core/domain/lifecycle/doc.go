// Package lifecycle is the provisioning state machine of a Runtime as pure functions. Decide looks at what KEB asked
// for (Intent), what the operator observed (the shoot, the GardenerCluster and kubeconfig Secret, the runtime's
// configuration) and the time, and returns the next named Step, the one Action to perform and the status to report.
// Controllers perform the action, fold its result into the observation (Apply*/ActionFailed) and ask again, until
// the decision is to wait. The package never reads the clock and imports only the standard library and core.
package lifecycle
