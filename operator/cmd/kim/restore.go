package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/gardener"
	"github.com/kyma-project/kim/adapters/gardener/guard"
	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/usecase"
	"github.com/kyma-project/kim/operator/config"
	"github.com/kyma-project/kim/operator/controllers/setup"
)

// runRestore brings back the Runtime of a shoot that waits for deletion (see docs/deletion.md): it marks the shoot
// for restore and re-creates the Runtime recorded on it; the operator then cancels the deletion and wakes the shoot.
func runRestore(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("kim restore", flag.ContinueOnError)
	kcpFlags, gardenFlags := bindKCPFlags(fs), bindGardenFlags(fs)
	project := fs.String("gardener-project", "kyma", "Gardener project of the shoot")
	dryRun := fs.Bool("dry-run", false, "only check that the shoot can be restored and print what would happen")
	configFile := fs.String("config", "", "operator configuration file (for the deletion windows and the data-privacy cap; default: built-in defaults)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: kim restore [flags] SHOOT\n\nRestores the Runtime of a shoot that waits for deletion: marks the shoot for restore (so it is not\ndeleted meanwhile) and re-creates the recorded Runtime in its recorded namespace; the operator then wakes the shoot.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := parseArgs(fs, args, true); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageErrorf("exactly one shoot name is required")
	}
	if !gardenFlags.set() {
		return errNoGarden
	}
	cfg := &config.OperatorConfig{APIVersion: config.APIVersion, Kind: config.Kind}
	cfg.Default()
	if *configFile != "" {
		loaded, err := config.Load(*configFile)
		if err != nil {
			return err
		}
		cfg = loaded
	}
	namespace, err := kcpFlags.runtimeNamespace()
	if err != nil {
		return err
	}
	scheme, err := setup.NewScheme()
	if err != nil {
		return err
	}
	gardenNamespace := wire.GardenNamespace(*project)
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
	restorer := &usecase.Restorer{Shoots: &gardener.Shoots{Client: garden, Live: garden, Namespace: gardenNamespace, RuntimeNamespace: namespace},
		Runtimes: &kube.RuntimeRegistry{Live: kcp, Writer: kcp, Namespaces: []string{namespace}},
		Policy:   cfg.Deletion.DeletionPolicy(), DefaultNamespace: namespace}
	shoot := fs.Arg(0)
	plan, err := restorer.Restore(ctx, shoot, time.Now(), *dryRun)
	if err != nil {
		return err
	}
	if *dryRun {
		fmt.Printf("dry run: shoot %s can be restored: Runtime %s/%s would be re-created (the shoot would otherwise be deleted at %s)\n",
			shoot, plan.Namespace, plan.RuntimeID, plan.DueAt.UTC().Format(time.RFC3339))
		return nil
	}
	fmt.Printf("restore of shoot %s requested: Runtime %s/%s is back, the operator wakes the shoot and cancels its deletion\n",
		shoot, plan.Namespace, plan.RuntimeID)
	return nil
}
