// Package shoot is the pure domain model of the Gardener cluster a Kyma runtime needs.
//
// Generate turns a Runtime (what KEB asked for) plus operator Config into a Spec (what the
// cluster must look like); GenerateUpdate does the same for an existing cluster, given the
// domain view of the current shoot (Current), so that Gardener's update rules hold: zone order
// is preserved, versions never go down, and state we do not own survives.
//
// Generation is a fixed list of small named steps (see Steps); each is a plain function tested
// on its own. Invalid input yields a *ValidationError with a stable Reason that controllers turn
// into a condition reason. The package imports only the standard library.
package shoot
