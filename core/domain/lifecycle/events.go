package lifecycle

// progressReasons are the Ready reasons of the normal course of provisioning and updating: the operator or Gardener
// is working and nothing needs a person. The rest are problems (a failure, a retry, something held or refused) or
// rare steps with events of their own (adoption, restore).
var progressReasons = map[Reason]bool{
	ReasonCheckingSeed: true, ReasonClaimingAuditLog: true, ReasonCreatingShoot: true, ReasonUpdatingShoot: true,
	ReasonWaitingForGardener: true, ReasonCreatingGardenerCluster: true, ReasonWaitingForKubeconfig: true,
	ReasonConfiguringRuntime: true, ReasonBootstrapInProgress: true,
}

// Progress reports whether r is a reason of the normal course of provisioning or updating (see progressReasons).
func (r Reason) Progress() bool { return progressReasons[r] }

// StateChangeEvent reports whether a Runtime whose status said state from with Ready reason fromReason ("" for a
// Runtime without status) and now gets the decision d is worth an event. Events are for what a person may want
// to know without reading the status: a state change KEB sees (Ready, leaving Ready, Failed, recovering), and a
// problem while Pending. The steps of a provisioning in its normal course are not: the Ready condition already
// says each, and an event per step cost a provisioning two or three KCP writes more than the previous manager
// made (issue 29). A new Runtime's first Pending step is told by the pass's own event (ShootApplied,
// ShootAdopted) or by the status.
func StateChangeEvent(from State, fromReason Reason, d Decision) bool {
	if from == d.State && fromReason == d.Reason {
		return false
	}
	if d.State == StatePending && d.Reason.Progress() && (from == "" || from == StatePending) {
		return false
	}
	return true
}
