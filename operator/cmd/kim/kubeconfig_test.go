package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/clientcmd"
)

func writeKubeconfig(t *testing.T, path, current string, contexts map[string][2]string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Config\ncurrent-context: " + current + "\nclusters:\n")
	for name, c := range contexts {
		b.WriteString("- name: " + name + "\n  cluster: {server: " + c[0] + "}\n")
	}
	b.WriteString("users:\n- name: u\n  user: {token: t}\ncontexts:\n")
	for name, c := range contexts {
		b.WriteString("- name: " + name + "\n  context: {cluster: " + name + ", user: u, namespace: \"" + c[1] + "\"}\n")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestKubeconfigLoadsLikeKubectl: $KUBECONFIG with several files (merged, the first file's current context wins),
// ~/.kube/config without it, --kubeconfig for one file, --context to pick another context, -n over the context's
// namespace, kcp-system where neither names one.
func TestKubeconfigLoadsLikeKubectl(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	t.Setenv("HOME", home)
	a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	writeKubeconfig(t, a, "kcp", map[string][2]string{"kcp": {"https://kcp.example", ""}})
	writeKubeconfig(t, b, "garden", map[string][2]string{"garden": {"https://garden.example", "garden-kyma"}, "kcp-dev": {"https://kcp-dev.example", "kcp-dev"}})
	writeKubeconfig(t, filepath.Join(home, ".kube", "config"), "home", map[string][2]string{"home": {"https://home.example", "team"}})
	// client-go computes ~/.kube/config once at start-up from $HOME; point it at this test's home.
	saved := clientcmd.RecommendedHomeFile
	clientcmd.RecommendedHomeFile = filepath.Join(home, ".kube", "config")
	t.Cleanup(func() { clientcmd.RecommendedHomeFile = saved })

	for _, tc := range []struct {
		reason     string
		kubeconfig string // $KUBECONFIG; empty: unset
		args       []string
		wantKCP    string
		wantNS     string
		wantGarden string
	}{
		{reason: "several files in $KUBECONFIG, garden as a context of the second",
			kubeconfig: a + string(os.PathListSeparator) + b, args: []string{"--garden-context", "garden"},
			wantKCP: "https://kcp.example", wantNS: "kcp-system", wantGarden: "https://garden.example"},
		{reason: "--context picks another context and its namespace",
			kubeconfig: a + string(os.PathListSeparator) + b, args: []string{"--context", "kcp-dev", "--garden-context", "garden"},
			wantKCP: "https://kcp-dev.example", wantNS: "kcp-dev", wantGarden: "https://garden.example"},
		{reason: "-n wins over the context's namespace",
			kubeconfig: b, args: []string{"--context=kcp-dev", "-n", "other", "--garden-context=garden"},
			wantKCP: "https://kcp-dev.example", wantNS: "other", wantGarden: "https://garden.example"},
		{reason: "without $KUBECONFIG: ~/.kube/config",
			args:    []string{"--garden-kubeconfig", b},
			wantKCP: "https://home.example", wantNS: "team", wantGarden: "https://garden.example"},
		{reason: "--kubeconfig names one file; the old --kcp-kubeconfig still works",
			kubeconfig: b, args: []string{"--kcp-kubeconfig", a, "--garden-kubeconfig", b},
			wantKCP: "https://kcp.example", wantNS: "kcp-system", wantGarden: "https://garden.example"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			if tc.kubeconfig == "" {
				t.Setenv("KUBECONFIG", "")
				if err := os.Unsetenv("KUBECONFIG"); err != nil {
					t.Fatal(err)
				}
			} else {
				t.Setenv("KUBECONFIG", tc.kubeconfig)
			}
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			kcp, garden := bindKCPFlags(fs), bindGardenFlags(fs)
			if _, err := parseLikeTheCLI(fs, tc.args); err != nil {
				t.Fatal(err)
			}
			kcpCfg, err := kcp.restConfig()
			if err != nil {
				t.Fatal(err)
			}
			ns, err := kcp.runtimeNamespace()
			if err != nil {
				t.Fatal(err)
			}
			gardenCfg, err := garden.restConfig()
			if err != nil {
				t.Fatal(err)
			}
			got := []string{kcpCfg.Host, ns, gardenCfg.Host}
			if diff := cmp.Diff([]string{tc.wantKCP, tc.wantNS, tc.wantGarden}, got); diff != "" {
				t.Errorf("KCP host, namespace, garden host (-want +got):\n%s", diff)
			}
		})
	}
}

// parseLikeTheCLI parses args with the flags of fs as every kim command does; it returns the positional arguments.
func parseLikeTheCLI(fs *pflag.FlagSet, args []string) ([]string, error) {
	cmd := &cobra.Command{Use: "test"}
	cmd.Flags().AddFlagSet(fs)
	if err := cmd.ParseFlags(args); err != nil {
		return nil, err
	}
	return cmd.Flags().Args(), nil
}

// TestFlagsWhereverTheyStand: flags before, between and after positional arguments, as kubectl takes them; after
// "--" everything is positional.
func TestFlagsWhereverTheyStand(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantPos []string
		wantCtx string
		wantNS  string
	}{
		{args: []string{"c-123", "--context", "kcp"}, wantPos: []string{"c-123"}, wantCtx: "kcp"},
		{args: []string{"--context=kcp", "c-123", "-n", "ns"}, wantPos: []string{"c-123"}, wantCtx: "kcp", wantNS: "ns"},
		{args: []string{"a", "--context", "kcp", "b", "--namespace=x"}, wantPos: []string{"a", "b"}, wantCtx: "kcp", wantNS: "x"},
		{args: []string{"--context", "kcp", "--", "--not-a-flag"}, wantPos: []string{"--not-a-flag"}, wantCtx: "kcp"},
	} {
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		k := bindKCPFlags(fs)
		pos, err := parseLikeTheCLI(fs, tc.args)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if !cmp.Equal(pos, tc.wantPos) || k.context != tc.wantCtx || k.namespace != tc.wantNS {
			t.Errorf("%v: positional %v context %q namespace %q, want %v %q %q", tc.args, pos, k.context, k.namespace, tc.wantPos, tc.wantCtx, tc.wantNS)
		}
	}
}

// TestNoKubeconfig: without any kubeconfig the error says how to name one, with the flags of the cluster meant and
// KUBECONFIG, not client-go's KUBERNETES_MASTER (which kubectl users never set).
func TestNoKubeconfig(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("KUBECONFIG", "")
	if err := os.Unsetenv("KUBECONFIG"); err != nil {
		t.Fatal(err)
	}
	saved := clientcmd.RecommendedHomeFile
	clientcmd.RecommendedHomeFile = filepath.Join(home, ".kube", "config")
	t.Cleanup(func() { clientcmd.RecommendedHomeFile = saved })

	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	kcp, garden := bindKCPFlags(fs), bindGardenFlags(fs)
	for _, tc := range []struct {
		flags *kubeconfigFlags
		want  []string
	}{
		{flags: kcp, want: []string{"--kubeconfig", "--context", "KUBECONFIG", clientcmd.RecommendedHomeFile}},
		{flags: garden, want: []string{"--garden-kubeconfig", "--garden-context", "KUBECONFIG"}},
	} {
		_, err := tc.flags.restConfig()
		if err == nil {
			t.Fatal("no error without a kubeconfig")
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not name %s", err, w)
			}
		}
		if strings.Contains(err.Error(), "KUBERNETES_MASTER") {
			t.Errorf("error %q sends the user to KUBERNETES_MASTER", err)
		}
	}
}

// TestMigrateDryRunMeansWhatItSays: a dry run by default and with --dry-run(=true); --apply and --dry-run=false act;
// --apply with --dry-run=true is a contradiction.
func TestMigrateDryRunMeansWhatItSays(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		apply   bool
		wantErr bool
	}{
		{args: nil},
		{args: []string{"--dry-run"}},
		{args: []string{"--dry-run=true"}},
		{args: []string{"--apply"}, apply: true},
		{args: []string{"--dry-run=false"}, apply: true},
		{args: []string{"--apply", "--dry-run=false"}, apply: true},
		{args: []string{"--apply", "--dry-run=true"}, wantErr: true},
	} {
		cmd := &cobra.Command{Use: "migrate"}
		fs := pflag.NewFlagSet("migrate", pflag.ContinueOnError)
		f := bindMigrateFlags(fs)
		cmd.Flags().AddFlagSet(fs)
		if err := cmd.ParseFlags(tc.args); err != nil {
			t.Fatal(err)
		}
		apply, err := f.applies(cmd.Flags().Changed("dry-run"))
		if apply != tc.apply || (err != nil) != tc.wantErr {
			t.Errorf("%v: apply %t, error %v; want apply %t, an error: %t", tc.args, apply, err, tc.apply, tc.wantErr)
		}
	}
}

// TestFlagsKubectlStyle: the shorthands, the deprecated --kcp-kubeconfig (working, hidden, with a warning) and the
// repeatable --accept, whose values are taken whole (a path may hold a comma).
func TestFlagsKubectlStyle(t *testing.T) {
	cmd := newMigrateCommand(&bytes.Buffer{}, &bytes.Buffer{})
	var warnings bytes.Buffer
	cmd.Flags().SetOutput(&warnings) // as cli.Execute does: warnings to stderr
	if err := cmd.ParseFlags([]string{"-n", "kcp", "--kcp-kubeconfig=old.yaml", "-o", "json",
		"--accept", "spec.a", "--accept=rt-1:spec.b,c"}); err != nil {
		t.Fatal(err)
	}
	get := func(name string) string { return cmd.Flags().Lookup(name).Value.String() }
	accept, err := cmd.Flags().GetStringArray("accept")
	if err != nil {
		t.Fatal(err)
	}
	if get("namespace") != "kcp" || get("kcp-kubeconfig") != "old.yaml" || get("output") != "json" ||
		!cmp.Equal(accept, []string{"spec.a", "rt-1:spec.b,c"}) {
		t.Errorf("namespace %q, kcp-kubeconfig %q, output %q, accept %q", get("namespace"), get("kcp-kubeconfig"), get("output"), accept)
	}
	if !strings.Contains(warnings.String(), "--kcp-kubeconfig has been deprecated, use --kubeconfig") {
		t.Errorf("no deprecation warning: %q", warnings.String())
	}
	var help bytes.Buffer
	cmd.SetOut(&help)
	if err := cmd.Help(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"-n, --namespace string", "-o, --output string", "--accept [RUNTIME_ID_OR_SHOOT:]PATH"} {
		if !strings.Contains(help.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, help.String())
		}
	}
	if strings.Contains(help.String(), "kcp-kubeconfig") {
		t.Errorf("help shows the deprecated flag:\n%s", help.String())
	}
}
