package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/internal/cli"
	"github.com/kyma-project/kim/internal/scheme"
	"github.com/kyma-project/kim/operator/app"
)

// newRestoreCommand is `kim restore`: it brings back the Runtime of a shoot that waits for deletion (see
// docs/deletion.md): it marks the shoot for restore and re-creates the Runtime recorded on it; the operator then
// cancels the deletion and wakes the shoot.
func newRestoreCommand(stdout io.Writer) *cobra.Command {
	fs := pflag.NewFlagSet("restore", pflag.ContinueOnError)
	kcpFlags, gardenFlags := bindKCPFlags(fs), bindGardenFlags(fs)
	landscape := bindLandscapeFlags(fs)
	dryRun := fs.Bool("dry-run", false, "only check that the shoot can be restored and print what would happen")
	cmd := command("restore SHOOT [flags]", "Bring back the Runtime of a shoot waiting for deletion",
		"Restores the Runtime of a shoot that waits for deletion: marks the shoot for restore (so it is not deleted\n"+
			"meanwhile) and re-creates the recorded Runtime in its recorded namespace; the operator then wakes the shoot.\n"+
			"The Gardener project and the deletion windows come from the operator configuration, as for migrate.",
		"  # check first: what would be re-created, and when the shoot would otherwise be deleted\n"+
			"  kim restore --context kcp --garden-context garden --dry-run c-1a2b3c\n"+
			"  kim restore --context kcp --garden-context garden c-1a2b3c",
		cli.ExactArgs(1, "shoot name"), fs,
		func(cmd *cobra.Command, args []string) error {
			return restore(cmd.Context(), args[0], kcpFlags, gardenFlags, landscape, *dryRun, stdout)
		})
	cmd.ValidArgsFunction = restorableShoots
	return cmd
}

func restore(ctx context.Context, shoot string, kcpFlags, gardenFlags *kubeconfigFlags, landscape *landscapeFlags, dryRun bool, stdout io.Writer) error {
	if !gardenFlags.set() {
		return errNoGarden
	}
	namespace, err := kcpFlags.runtimeNamespace()
	if err != nil {
		return err
	}
	scheme, err := scheme.New()
	if err != nil {
		return err
	}
	kcpCfg, err := kcpFlags.restConfig()
	if err != nil {
		return err
	}
	kcp, err := client.New(kcpCfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("KCP client: %w", err)
	}
	cfg, err := landscape.load(ctx, kcp, namespace)
	if err != nil {
		return err
	}
	gardenNamespace := wire.GardenNamespace(cfg.Gardener.Project)
	gardenCfg, err := gardenFlags.restConfig()
	if err != nil {
		return err
	}
	restorer, err := app.NewRestorer(kcp, gardenCfg, namespace, gardenNamespace, cfg.Deletion.DeletionPolicy())
	if err != nil {
		return err
	}
	plan, err := restorer.Restore(ctx, shoot, time.Now(), dryRun)
	if err != nil {
		return err
	}
	if dryRun {
		fmt.Fprintf(stdout, "dry run: shoot %s can be restored: Runtime %s/%s would be re-created (the shoot would otherwise be deleted at %s)\n",
			shoot, plan.Namespace, plan.RuntimeID, plan.DueAt.UTC().Format(time.RFC3339))
		return nil
	}
	fmt.Fprintf(stdout, "restore of shoot %s requested: Runtime %s/%s is back, the operator wakes the shoot and cancels its deletion\n",
		shoot, plan.Namespace, plan.RuntimeID)
	return nil
}
