// Command bundlegen writes the OLM bundle (bundle/, bundle.Dockerfile) from the kustomize manifests in
// config/manifests, the way `operator-sdk generate bundle` lays it out, because the operator-sdk CLI is not available
// to this project. The output is deterministic: the same inputs give the same bytes, so a test can detect a stale
// bundle. Run it through `make bundle`.
//
// It lives in operator/cmd rather than hack/ because hack/ holds scripts only; as a package of the main module it is
// built, vetted, linted and tested with everything else, and the bundle validation test next to it runs in
// `go test ./...`. The manager binary does not import it.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

// Defaults of the flags; `make bundle VERSION=x.y.z IMG=...` overrides them for a release.
const (
	defaultVersion = "0.1.0"
	defaultImage   = "ghcr.io/kyma-project/kim"
	defaultPackage = "kim"
	defaultChannel = "fast"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "bundlegen:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	in := Input{}
	fs := flag.NewFlagSet("bundlegen", flag.ContinueOnError)
	fs.StringVar(&in.ManifestsDir, "manifests", "config/manifests", "kustomization with the CSV base, the operator, samples and scorecard config")
	out := fs.String("out", "bundle", "bundle directory to (re)write")
	dockerfile := fs.String("dockerfile", "bundle.Dockerfile", "path of the bundle image Dockerfile to write")
	fs.StringVar(&in.Version, "version", defaultVersion, "semantic version of the bundle")
	image := fs.String("image", "", "manager image (default "+defaultImage+":<version>)")
	fs.StringVar(&in.Package, "package", defaultPackage, "OLM package name")
	channels := fs.String("channels", defaultChannel, "comma-separated channels of the bundle")
	fs.StringVar(&in.DefaultChannel, "default-channel", defaultChannel, "default channel of the package")
	validate := fs.Bool("validate", false, "validate the written bundle as `operator-sdk bundle validate --select-optional suite=operatorframework` does")
	if err := fs.Parse(args); err != nil {
		return err
	}
	in.Image = *image
	if in.Image == "" {
		in.Image = defaultImage + ":" + in.Version
	}
	in.Channels = strings.Split(*channels, ",")
	b, err := Generate(in)
	if err != nil {
		return err
	}
	if err := b.Write(*out, *dockerfile); err != nil {
		return err
	}
	if *validate {
		if err := Validate(*out); err != nil {
			return fmt.Errorf("the written bundle does not validate:\n%w", err)
		}
		fmt.Fprintf(os.Stderr, "bundlegen: %s validates (operatorframework suite)\n", *out)
	}
	return nil
}
