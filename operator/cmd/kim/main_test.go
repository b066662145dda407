package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestCommandLine: the CLI behaves as kubectl does: help on stdout with exit 0, a wrong command line in one line on
// stderr with exit 2 (nothing on stdout), shell completion, the version.
func TestCommandLine(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		code       int
		stdoutHas  string
		stderrLine string // the one line expected on stderr; "" means stderr stays empty
	}{
		{[]string{"--help"}, 0, "Available Commands", ""},
		{nil, 0, "Available Commands", ""},
		{[]string{"help", "migrate"}, 0, "Take over the runtimes", ""},
		{[]string{"nosuch"}, 2, "", `kim: unknown command "nosuch" for "kim" (see: kim --help)`},
		{[]string{"completion", "bash"}, 0, "bash completion", ""},
		{[]string{"completion", "zsh"}, 0, "compdef", ""},
		{[]string{"version"}, 0, "kim ", ""},
		{[]string{"--version"}, 0, "kim ", ""},
		{[]string{"probe", "-h"}, 0, "Usage: kim probe", ""},
		{[]string{"migrate", "--help"}, 0, "Usage: kim migrate", ""},
		{[]string{"restore"}, 2, "", "kim: exactly one shoot name is required (see: kim restore --help)"},
		{[]string{"migrate", "--nosuch"}, 2, "", "kim: flag provided but not defined: -nosuch (see: kim migrate --help)"},
		{[]string{"sandbox", "extra"}, 2, "", "kim: unexpected arguments [extra] (see: kim sandbox --help)"},
		{[]string{"sandbox", "--timeout=soon"}, 2, "", `kim: invalid value "soon" for flag -timeout: parse error (see: kim sandbox --help)`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			saved := helpOutput
			helpOutput = &stdout
			t.Cleanup(func() { helpOutput = saved })
			code := run(t.Context(), tc.args, &stdout, &stderr)
			if code != tc.code {
				t.Errorf("exit %d, want %d (stdout %q, stderr %q)", code, tc.code, stdout.String(), stderr.String())
			}
			if !strings.Contains(stdout.String(), tc.stdoutHas) || (tc.stdoutHas == "" && stdout.Len() > 0) {
				t.Errorf("stdout %q, want it to hold %q", stdout.String(), tc.stdoutHas)
			}
			if got := strings.TrimSuffix(stderr.String(), "\n"); got != tc.stderrLine {
				t.Errorf("stderr %q, want %q", stderr.String(), tc.stderrLine)
			}
		})
	}
}
