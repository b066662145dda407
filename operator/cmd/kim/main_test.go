package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandLine: the CLI behaves as kubectl does: help on stdout with exit 0, a wrong command line in one line on
// stderr with exit 2 (nothing on stdout), -n/-o shorthands and hidden deprecated flags, shell completion, the version,
// and Ctrl-C (a cancelled context) with exit 130 and the report of what was done.
func TestCommandLine(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	writeKubeconfig(t, kubeconfig, "kcp", map[string][2]string{"kcp": {"https://127.0.0.1:1", "kcp-system"}})
	operatorConfig := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(operatorConfig, []byte("apiVersion: kim.kyma-project.io/v1alpha1\nkind: OperatorConfig\ngardener:\n  project: kyma\nshoot:\n  defaultKubernetesVersion: \"1.33\"\n  defaultMachineImage:\n    name: gardenlinux\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	probeRuntime := filepath.Join("..", "..", "..", "config", "probe", "runtime.yaml")
	interrupted, cancel := context.WithCancel(t.Context())
	cancel()
	for _, tc := range []struct {
		args       []string
		ctx        context.Context
		code       int
		stdoutHas  string
		stdoutLack string
		stderrLine string // the one line expected on stderr; "" means stderr stays empty
	}{
		{args: []string{"--help"}, stdoutHas: "Available Commands"},
		{args: nil, stdoutHas: "Available Commands"},
		{args: []string{"help", "migrate"}, stdoutHas: "Takes over the runtimes"},
		{args: []string{"nosuch"}, code: 2, stderrLine: `kim: unknown command "nosuch" for "kim" (see: kim --help)`},
		{args: []string{"sandbox"}, code: 2, stderrLine: `kim: unknown command "sandbox" for "kim" (see: kim --help)`},
		{args: []string{"completion", "bash"}, stdoutHas: "bash completion"},
		{args: []string{"completion", "zsh"}, stdoutHas: "compdef"},
		{args: []string{"completion", "fish"}, stdoutHas: "complete -c kim"},
		{args: []string{"version"}, stdoutHas: "kim "},
		{args: []string{"--version"}, stdoutHas: "kim "},
		{args: []string{"probe", "-h"}, stdoutHas: "kim probe [flags]"},
		{args: []string{"migrate", "--help"}, stdoutHas: "-o, --output string"},
		{args: []string{"restore", "--help"}, stdoutHas: "-n, --namespace string", stdoutLack: "kcp-kubeconfig"},
		{args: []string{"restore"}, code: 2, stderrLine: "kim: exactly 1 shoot name required, got 0 (see: kim restore --help)"},
		{args: []string{"migrate", "--nosuch"}, code: 2, stderrLine: "kim: unknown flag: --nosuch (see: kim migrate --help)"},
		{args: []string{"migrate", "extra"}, code: 2, stderrLine: "kim: unexpected arguments [extra] (see: kim migrate --help)"},
		{args: []string{"migrate", "-o", "xml"}, code: 2, stderrLine: `kim: --output "xml": want one of text, json, yaml (see: kim migrate --help)`},
		{args: []string{"probe", "--ready-timeout=soon"}, code: 2,
			stderrLine: `kim: invalid argument "soon" for "--ready-timeout" flag: parse error (see: kim probe --help)`},
		{args: []string{"probe", "--kubeconfig", kubeconfig, "--runtime", probeRuntime}, ctx: interrupted, code: 130,
			stdoutHas: "kim probe: INTERRUPTED in phase cleanup", stderrLine: "kim probe: interrupted in phase cleanup (metrics not exported)"},
		{args: []string{"migrate", "--kubeconfig", kubeconfig, "--garden-kubeconfig", kubeconfig, "--config", operatorConfig}, ctx: interrupted, code: 130,
			stderrLine: "kim migrate: interrupted while reading the landscape: nothing was examined"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			ctx := tc.ctx
			if ctx == nil {
				ctx = t.Context()
			}
			var stdout, stderr bytes.Buffer
			code := run(ctx, tc.args, &stdout, &stderr)
			if code != tc.code {
				t.Errorf("exit %d, want %d (stdout %q, stderr %q)", code, tc.code, stdout.String(), stderr.String())
			}
			if !strings.Contains(stdout.String(), tc.stdoutHas) || (tc.stdoutHas == "" && stdout.Len() > 0) {
				t.Errorf("stdout %q, want it to hold %q", stdout.String(), tc.stdoutHas)
			}
			if tc.stdoutLack != "" && strings.Contains(stdout.String(), tc.stdoutLack) {
				t.Errorf("stdout %q holds %q", stdout.String(), tc.stdoutLack)
			}
			if got := lastLine(stderr.String()); got != tc.stderrLine {
				t.Errorf("stderr %q, want the line %q", stderr.String(), tc.stderrLine)
			}
		})
	}
}

// lastLine is the last line of s: the progress lines of a long command come before its one-line error.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return lines[len(lines)-1]
}
