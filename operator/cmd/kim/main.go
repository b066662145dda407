// Command kim is the CLI of the Kyma Infrastructure Manager. Its `sandbox` subcommand runs the whole system on one
// machine: garden-in-a-box (real kube-apiserver/etcd for KCP and garden, the real gardener-apiserver, a simulated
// gardenlet) plus the operator in-process; `restore` is an on-call tool; `migrate` takes over a landscape of the
// previous infrastructure manager; `probe` is the end-to-end probe of a landscape. The production manager binary
// (operator/cmd/manager) does not carry any of this.
//
// Installed as kubectl-kim on the PATH (`make install-kubectl-plugin`), it is the kubectl plugin `kubectl kim`, and it
// loads kubeconfigs the way kubectl does ($KUBECONFIG with several files, ~/.kube/config, --kubeconfig, --context).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kyma-project/kim/operator/version"
)

const usageTemplate = `CMD — Kyma Infrastructure Manager CLI

Usage:
  CMD sandbox [flags]   run garden-in-a-box with the operator (see: CMD sandbox -h)
  CMD restore SHOOT     bring back the Runtime of a shoot waiting for deletion (see: CMD restore -h)
  CMD migrate [flags]   take over the runtimes of the previous infrastructure manager (dry run by default; see: CMD migrate -h)
  CMD probe [flags]     provision, reach and delete a small runtime as KEB does; exit non-zero on failure (see: CMD probe -h)
  CMD version           print the version
  CMD help              show this text
`

// commandName is how the user called us: "kubectl kim" when kubectl runs the binary as the plugin kubectl-kim.
func commandName() string {
	if strings.HasPrefix(filepath.Base(os.Args[0]), "kubectl-") {
		return "kubectl kim"
	}
	return "kim"
}

func main() {
	usage := strings.ReplaceAll(usageTemplate, "CMD", commandName())
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	switch os.Args[1] {
	case "sandbox":
		err := runSandbox(os.Args[2:])
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "sandbox:", err)
			os.Exit(1)
		}
	case "restore":
		err := runRestore(context.Background(), os.Args[2:])
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "restore:", err)
			os.Exit(1)
		}
	case "migrate":
		err := runMigrate(context.Background(), os.Args[2:], os.Stdout)
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "migrate:", err)
			os.Exit(1)
		}
	case "probe":
		err := runProbe(context.Background(), os.Args[2:], os.Stdout)
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "probe:", err)
			os.Exit(1)
		}
	case "version", "--version":
		fmt.Println(commandName(), version.Get())
	case "help", "-h", "--help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "kim: unknown command %q\n\n%s", os.Args[1], usage)
		os.Exit(2)
	}
}
