package shoot

// CredentialsBindingMigration reports whether an existing shoot still references a SecretBinding and must be
// switched to the CredentialsBinding the spec names before the spec can be applied: Gardener rejects a shoot that
// names both, and server-side apply cannot clear a field another manager owns, so the switch is a separate update
// (clear secretBindingName, set credentialsBindingName). Once done the shoot has no SecretBinding, so it happens
// exactly once.
func CredentialsBindingMigration(current Current, spec Spec) (binding string, needed bool) {
	if current.SecretBindingName == "" || spec.CredentialsBinding == "" {
		return "", false
	}
	return spec.CredentialsBinding, true
}
