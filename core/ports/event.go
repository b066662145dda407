package ports

// Event is something that happened and is worth telling people about: the controller records it on its object
// (events.k8s.io) and logs it. Reasons are stable: people and alerts match on them.
type Event struct {
	// Warning makes it a warning event (otherwise a normal one).
	Warning bool
	Reason  string
	// Action says what the operator did or tried; empty: the reason says it.
	Action  string
	Message string
}
