// Command kim is the developer CLI of the Kyma Infrastructure Manager. Its `sandbox` subcommand runs the
// whole system on one machine: garden-in-a-box (real kube-apiserver/etcd for KCP and garden, the real
// gardener-apiserver, a simulated gardenlet) plus the operator in-process. The production manager binary
// (operator/cmd/manager) does not carry any of this.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
)

const usage = `kim — Kyma Infrastructure Manager developer CLI

Usage:
  kim sandbox [flags]   run garden-in-a-box with the operator (see: kim sandbox -h)
  kim restore SHOOT     bring back the Runtime of a shoot waiting for deletion (see: kim restore -h)
  kim help              show this text
`

func main() {
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
	case "help", "-h", "--help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "kim: unknown command %q\n\n%s", os.Args[1], usage)
		os.Exit(2)
	}
}
