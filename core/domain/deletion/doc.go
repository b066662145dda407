// Package deletion is the safe-deletion policy as pure functions. Deleting a Runtime does not delete its cluster:
// access is removed, the shoot is hibernated and marked with a due time, and the Runtime goes away at once (KEB
// waits for NotFound). The reaper deletes marked shoots when their window has passed, with Gardener's deletion
// confirmation, only if the operator created them, never while the emergency brake is on, and sets Gardener's
// force-deletion confirmation when a deletion is stuck on codes Gardener accepts it for. Inside the window a
// shoot can be restored. The package never reads the clock and imports only the standard library and core.
package deletion
