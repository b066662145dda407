package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/gardener"
	"github.com/kyma-project/kim/adapters/gardener/guard"
	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/usecase"
	"github.com/kyma-project/kim/operator/app"
	"github.com/kyma-project/kim/operator/config"
	"github.com/kyma-project/kim/operator/controllers/runtime"
)

// runRestore brings back the Runtime of a shoot that waits for deletion (see docs/deletion.md): it recreates the
// Runtime from the record on the shoot; the operator then cancels the deletion and wakes the shoot.
func runRestore(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("kim restore", flag.ContinueOnError)
	kcpKubeconfig := fs.String("kcp-kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the KCP cluster (default $KUBECONFIG)")
	gardenKubeconfig := fs.String("garden-kubeconfig", "", "kubeconfig of the Gardener project")
	project := fs.String("gardener-project", "kyma", "Gardener project of the shoot")
	namespace := fs.String("namespace", "kcp-system", "KCP namespace of the Runtime when the deletion record does not name one")
	dryRun := fs.Bool("dry-run", false, "only check that the shoot can be restored and print what would happen")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: kim restore [flags] SHOOT\n\nRestores the Runtime of a shoot that waits for deletion: marks the shoot for restore (so it is not\ndeleted meanwhile) and re-creates the recorded Runtime in its recorded namespace; the operator then wakes the shoot.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	configFile := fs.String("config", "", "operator configuration file (for the deletion windows and the data-privacy cap; default: built-in defaults)")
	if err := fs.Parse(args); err != nil {
		return err
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
	policy := runtime.DeletionPolicy(cfg.Deletion)
	if fs.NArg() != 1 {
		fs.Usage()
		return errors.New("exactly one shoot name is required")
	}
	if *gardenKubeconfig == "" || *kcpKubeconfig == "" {
		return errors.New("--garden-kubeconfig and --kcp-kubeconfig (or $KUBECONFIG) are required")
	}
	scheme, err := app.NewScheme()
	if err != nil {
		return err
	}
	gardenNamespace := "garden-" + *project
	gardenCfg, err := guard.LoadKubeconfig(*gardenKubeconfig, guard.ProjectPolicy(gardenNamespace))
	if err != nil {
		return err
	}
	garden, err := client.New(gardenCfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("garden client: %w", err)
	}
	kcpCfg, err := clientcmd.BuildConfigFromFlags("", *kcpKubeconfig)
	if err != nil {
		return fmt.Errorf("KCP kubeconfig %s: %w", *kcpKubeconfig, err)
	}
	kcp, err := client.New(kcpCfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("KCP client: %w", err)
	}
	shoots := &gardener.Shoots{Client: garden, Live: garden, Namespace: gardenNamespace, RuntimeNamespace: *namespace}
	restorer := &usecase.Restorer{Shoots: shoots, Policy: policy,
		Runtimes:         &kube.RuntimeRegistry{Live: kcp, Writer: kcp, Namespaces: []string{*namespace}},
		DefaultNamespace: *namespace}
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
