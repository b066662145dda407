package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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
	const plugin, completion = "/home/me/.krew/bin/kubectl-kim", "/home/me/.krew/bin/kubectl_complete-kim"
	for _, tc := range []struct {
		argv0      string // how the binary was called; "" means kim
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
			stderrLine: `kim: invalid argument "soon" for "--ready-timeout" flag: time: invalid duration "soon" (see: kim probe --help)`},
		{args: []string{"probe", "--kubeconfig", kubeconfig, "--runtime", probeRuntime}, ctx: interrupted, code: 130,
			stdoutHas: "kim probe: INTERRUPTED in phase cleanup", stderrLine: "kim probe: interrupted in phase cleanup (metrics not exported)"},
		{args: []string{"migrate", "--kubeconfig", kubeconfig, "--garden-kubeconfig", kubeconfig, "--config", operatorConfig}, ctx: interrupted, code: 130,
			stderrLine: "kim migrate: interrupted while reading the landscape: nothing was examined"},
		// Under kubectl (the binary called as kubectl-kim) help, usage lines and error hints say "kubectl kim".
		{argv0: plugin, args: []string{"--help"}, stdoutHas: `Use "kubectl kim [command] --help"`},
		{argv0: plugin, args: []string{"restore", "--help"}, stdoutHas: "  kubectl kim restore SHOOT [flags]"},
		{argv0: plugin, args: []string{"migrate", "-h"}, stdoutHas: "  kubectl kim migrate --context kcp --garden-context garden\n"},
		{argv0: plugin, args: []string{"version"}, stdoutHas: "kubectl kim "},
		{argv0: plugin, args: []string{"nosuch"}, code: 2,
			stderrLine: `kubectl kim: unknown command "nosuch" for "kubectl kim" (see: kubectl kim --help)`},
		{argv0: plugin, args: []string{"restore"}, code: 2,
			stderrLine: "kubectl kim: exactly 1 shoot name required, got 0 (see: kubectl kim restore --help)"},
		{argv0: plugin, args: []string{"migrate", "--nosuch"}, code: 2,
			stderrLine: "kubectl kim: unknown flag: --nosuch (see: kubectl kim migrate --help)"},
		// A script for kubectl kim would replace kubectl's own completion: nothing to source, the way to do it instead.
		{argv0: plugin, args: []string{"completion", "bash"}, code: 1, stderrLine: "kubectl kim completion: " + errPluginCompletion.Error()},
		{argv0: plugin, args: []string{"help", "completion"}, stdoutHas: "kubectl_complete-kim"},
		// kubectl runs kubectl_complete-kim with the words after "kubectl kim"; cobra's answer ends with :<directive>.
		{argv0: completion, args: []string{"re"}, stdoutHas: "restore\tBring back the Runtime", stderrLine: "Completion ended with directive: ShellCompDirectiveNoFileComp"},
		{argv0: completion, args: []string{"migrate", "--ou"}, stdoutHas: "--output\t", stderrLine: "Completion ended with directive: ShellCompDirectiveNoFileComp"},
		{argv0: completion, args: []string{""}, stdoutHas: "migrate\t", stderrLine: "Completion ended with directive: ShellCompDirectiveNoFileComp"},
	} {
		t.Run(strings.TrimSpace(filepath.Base(tc.argv0)+" "+strings.Join(tc.args, " ")), func(t *testing.T) {
			ctx := tc.ctx
			if ctx == nil {
				ctx = t.Context()
			}
			argv0 := tc.argv0
			if argv0 == "" {
				argv0 = "kim"
			}
			var stdout, stderr bytes.Buffer
			code := run(ctx, argv0, tc.args, &stdout, &stderr)
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

// TestHelpIsComplete: every command's help, as kim and as kubectl kim, has Examples that call the CLI by that name,
// and no flag shows a Go type name as its argument (pflag names a flag.Value it does not know after its Go type).
func TestHelpIsComplete(t *testing.T) {
	known := map[string]bool{"": true, "string": true, "int": true, "duration": true, "strings": true, "stringArray": true}
	for _, argv0 := range []string{"kim", "kubectl-kim"} {
		root := newRootCommand(invokedAs(argv0), &bytes.Buffer{}, &bytes.Buffer{})
		walk(root, func(c *cobra.Command) {
			if c.Hidden {
				return
			}
			var help bytes.Buffer
			c.SetOut(&help)
			if err := c.Help(); err != nil {
				t.Fatal(err)
			}
			examples, ok := strings.CutPrefix(help.String()[strings.Index(help.String(), "Examples:")+1:], "xamples:\n")
			if !strings.Contains(help.String(), "Examples:") || !ok {
				t.Errorf("%s: help has no Examples:\n%s", c.CommandPath(), help.String())
			} else if !strings.Contains(examples, root.DisplayName()+" ") {
				t.Errorf("%s: the examples do not call %q:\n%s", c.CommandPath(), root.DisplayName(), examples)
			}
			// The command's own flags: a Kubernetes package linked into the test binary alone may add global ones.
			c.NonInheritedFlags().VisitAll(func(f *pflag.Flag) {
				name, _ := pflag.UnquoteUsage(f)
				if !known[name] && !strings.Contains(f.Usage, "`"+name+"`") {
					t.Errorf("%s --%s shows the type %q", c.CommandPath(), f.Name, name)
				}
			})
		})
	}
}

// TestFlagCompletion: flags complete their values as kubectl's do: -o the formats, --context and --garden-context
// the contexts of the kubeconfig in use, -n the namespaces of the selected cluster (here an API server that answers
// the list of namespaces).
func TestFlagCompletion(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/v1/namespaces":
			_, _ = io.WriteString(w, `{"kind":"NamespaceList","apiVersion":"v1","items":[{"metadata":{"name":"kcp-system"}},{"metadata":{"name":"kyma-system"}},{"metadata":{"name":"default"}}]}`)
		case "/apis/infrastructuremanager.kyma-project.io/v1/namespaces/kcp-system/deletionrecords":
			_, _ = io.WriteString(w, `{"kind":"DeletionRecordList","apiVersion":"infrastructuremanager.kyma-project.io/v1","items":[`+
				`{"metadata":{"name":"c-2b3c4d"},"spec":{"runtimeID":"rt-2","shootUID":"u2","markedAt":"2026-12-01T10:00:00Z","dueAt":"2026-12-04T10:00:00Z"}},`+
				`{"metadata":{"name":"c-1a2b3c"},"spec":{"runtimeID":"rt-1","shootUID":"u1","markedAt":"2026-12-01T09:00:00Z","dueAt":"2026-12-04T09:00:00Z"}},`+
				`{"metadata":{"name":"x-other"},"spec":{"runtimeID":"rt-3","shootUID":"u3","markedAt":"2026-12-01T09:00:00Z","dueAt":"2026-12-04T09:00:00Z"}}]}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer api.Close()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	writeKubeconfig(t, kubeconfig, "kcp", map[string][2]string{"kcp": {api.URL, ""}, "garden": {"https://garden.example", ""}})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{args: []string{"migrate", "-o", ""}, want: "text\njson\nyaml\n:4\n"},
		{args: []string{"restore", "--kubeconfig", kubeconfig, "--context", ""}, want: "garden\tgarden\nkcp\tkcp\n:4\n"},
		{args: []string{"migrate", "--kubeconfig", kubeconfig, "--garden-context", "g"}, want: "garden\tgarden\n:4\n"},
		{args: []string{"probe", "--kubeconfig", kubeconfig, "-n", "k"}, want: "kcp-system\nkyma-system\n:4\n"},
		// restore's shoot: the shoots waiting for deletion, from the KCP's DeletionRecords of the namespace.
		{args: []string{"restore", "--kubeconfig", kubeconfig, "c-"},
			want: "c-1a2b3c\truntime rt-1, deleted at 2026-12-04T09:00:00Z\nc-2b3c4d\truntime rt-2, deleted at 2026-12-04T10:00:00Z\n:4\n"},
		{args: []string{"restore", "--kubeconfig", kubeconfig, "c-1a2b3c", ""}, want: ":4\n"},
	} {
		var stdout bytes.Buffer
		if code := run(t.Context(), "kim", append([]string{cobra.ShellCompRequestCmd}, tc.args...), &stdout, io.Discard); code != 0 {
			t.Errorf("%v: exit %d", tc.args, code)
		}
		if stdout.String() != tc.want {
			t.Errorf("%v: completions %q, want %q", tc.args, stdout.String(), tc.want)
		}
	}
}
