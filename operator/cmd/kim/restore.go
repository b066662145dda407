package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/gardener"
	"github.com/kyma-project/kim/adapters/gardener/guard"
	"github.com/kyma-project/kim/operator/app"
	"github.com/kyma-project/kim/operator/controllers/runtime"
)

// runRestore brings back the Runtime of a shoot that waits for deletion (see docs/deletion.md): it recreates the
// Runtime from the record on the shoot; the operator then cancels the deletion and wakes the shoot.
func runRestore(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("kim restore", flag.ContinueOnError)
	kcpFlags, gardenFlags := bindKCPFlags(fs), bindGardenFlags(fs)
	project := fs.String("gardener-project", "kyma", "Gardener project of the shoot")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: kim restore [flags] SHOOT\n\nRestores the Runtime of a shoot that waits for deletion.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := parseInterspersed(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errors.New("exactly one shoot name is required")
	}
	if !gardenFlags.set() {
		return errNoGarden
	}
	namespace, err := kcpFlags.namespaceOr("kcp-system")
	if err != nil {
		return err
	}
	scheme, err := app.NewScheme()
	if err != nil {
		return err
	}
	gardenNamespace := "garden-" + *project
	gardenCfg, err := gardenFlags.restConfig()
	if err != nil {
		return err
	}
	if gardenCfg, err = guard.Secure(gardenCfg, guard.ProjectPolicy(gardenNamespace)); err != nil {
		return fmt.Errorf("garden kubeconfig: %w", err)
	}
	garden, err := client.New(gardenCfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("garden client: %w", err)
	}
	kcpCfg, err := kcpFlags.restConfig()
	if err != nil {
		return err
	}
	kcp, err := client.New(kcpCfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("KCP client: %w", err)
	}
	shoots := &gardener.Shoots{Client: garden, Live: garden, Namespace: gardenNamespace, RuntimeNamespace: namespace}
	shoot := fs.Arg(0)
	if err := runtime.Restore(ctx, shoots, kcp, shoot); err != nil {
		return err
	}
	fmt.Printf("restore of shoot %s requested: the Runtime is back and the operator wakes the shoot and cancels its deletion\n", shoot)
	return nil
}
