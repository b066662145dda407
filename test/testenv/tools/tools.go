// Package tools finds the programs tests run (kubectl, the envtest binaries). Outside CI a missing program skips the
// test with its name; under CI (CI=true, as hosted CI and .ci/run set it) it fails the test: a check that skips
// because its tool is missing must not pass as green.
package tools

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// InCI reports whether the tests run under CI (the CI environment variable is true).
func InCI() bool {
	ci, err := strconv.ParseBool(os.Getenv("CI"))
	return err == nil && ci
}

// Require returns the path of the program name, or ends the test when it is not on the PATH: a failure under CI, a
// skip naming the program (and hint, how to get it) otherwise.
func Require(t testing.TB, name, hint string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		missing(t, name+" is not on the PATH ("+hint+")")
	}
	return path
}

// RequireAssets ends the test when KUBEBUILDER_ASSETS (the envtest kube-apiserver and etcd) is not set, as Require
// does for a program.
func RequireAssets(t testing.TB) {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		missing(t, "KUBEBUILDER_ASSETS is not set (run `export KUBEBUILDER_ASSETS=$(hack/envtest.sh)` or `make test-integration`)")
	}
}

// RequireEnv returns the value of the environment variable name (a tool's location a make target sets, such as
// OLM_ASSETS), or ends the test when it is empty, as Require does for a program; hint says how to set it.
func RequireEnv(t testing.TB, name, hint string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		missing(t, name+" is not set ("+hint+")")
	}
	return v
}

// RequireFile returns path, or ends the test when no file is there, as Require does for a program on the PATH;
// hint says how to make it.
func RequireFile(t testing.TB, path, hint string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		missing(t, path+" is missing ("+hint+")")
	}
	return path
}

func missing(t testing.TB, what string) {
	t.Helper()
	if InCI() {
		t.Fatalf("%s: under CI a missing tool fails the run", what)
		return
	}
	t.Skip(what)
}
