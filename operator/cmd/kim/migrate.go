package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/migration"
	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/internal/cli"
	"github.com/kyma-project/kim/operator/app"
	"github.com/kyma-project/kim/operator/migrate"
)

// errMigrationFailed: some writes failed; the report says which.
var errMigrationFailed = errors.New("some runtimes could not be migrated (outcome Failed in the report); run again to retry them")

// migrateFlags are the settings of `kim migrate`.
type migrateFlags struct {
	kcp, garden        *kubeconfigFlags
	landscape          *landscapeFlags
	dryRun, apply      *bool
	accept             []string
	reportFile, output *string
	noServerDryRun     *bool
	parallel           *int
}

// newMigrateCommand is `kim migrate`: see docs/operations/migration.md.
func newMigrateCommand(stdout, stderr io.Writer) *cobra.Command {
	fs := pflag.NewFlagSet("migrate", pflag.ContinueOnError)
	f := bindMigrateFlags(fs)
	return command("migrate [flags]", "Take over the runtimes of the previous infrastructure manager (dry run by default)",
		"Takes over the runtimes of the previous infrastructure manager: GardenerClusters for KEB's Kyma resources that\n"+
			"lack one, and Runtimes generated back from the shoots so that the operator adopts them unchanged. Dry run by\n"+
			"default; progress lines go to stderr, the report to stdout; Ctrl-C stops, reports what was finished and exits\n"+
			"130. See docs/operations/migration.md.",
		"  # the plan (a dry run, the default)\n"+
			"  kim migrate --context kcp --garden-context garden\n"+
			"  # act, accepting a difference on every runtime, and keep the report\n"+
			"  kim migrate --context kcp --garden-context garden --apply --accept spec.kubernetes.kubeAPIServer.featureGates --report migration.json",
		cli.NoArgs, fs,
		func(cmd *cobra.Command, _ []string) error {
			return f.run(cmd.Context(), cmd.Flags().Changed("dry-run"), stdout, stderr)
		})
}

// bindMigrateFlags registers the flags of `kim migrate` on fs.
func bindMigrateFlags(fs *pflag.FlagSet) *migrateFlags {
	f := &migrateFlags{}
	f.kcp, f.garden = bindKCPFlags(fs), bindGardenFlags(fs)
	f.landscape = bindLandscapeFlags(fs)
	f.dryRun = fs.Bool("dry-run", true, "only report what would be done (the default); --dry-run=false acts as --apply does")
	f.apply = fs.Bool("apply", false, "create the missing GardenerClusters and Runtimes (the same as --dry-run=false)")
	fs.StringArrayVar(&f.accept, "accept", nil, "accept a difference the operator's first apply would write, given as `[RUNTIME_ID_OR_SHOOT:]PATH` (a path prefix as the report prints it; repeatable)")
	f.reportFile = fs.String("report", "", "also write the report as JSON to this file")
	f.output = bindOutputFlag(fs)
	f.noServerDryRun = fs.Bool("no-server-dry-run", false, "do not ask the gardener-apiserver for dry runs of the operator's apply (compare only)")
	f.parallel = fs.Int("parallel", 8, "runtimes examined at once (each one may be a connection to the runtime)")
	return f
}

// runMigrate runs `kim migrate` with args (progress lines are discarded).
func runMigrate(ctx context.Context, args []string, stdout io.Writer) error {
	return execute(ctx, newMigrateCommand(stdout, io.Discard), args, stdout)
}

// applies says whether the command acts: --apply, or --dry-run=false, which means what it says; a dry run is the
// default. dryRunGiven is whether --dry-run was on the command line.
func (f *migrateFlags) applies(dryRunGiven bool) (bool, error) {
	switch {
	case *f.apply && dryRunGiven && *f.dryRun:
		return false, cli.Usagef("--apply and --dry-run=true contradict each other")
	case *f.apply:
		return true, nil
	}
	return dryRunGiven && !*f.dryRun, nil
}

func (f *migrateFlags) run(ctx context.Context, dryRunGiven bool, stdout, stderr io.Writer) error {
	apply, err := f.applies(dryRunGiven)
	if err != nil {
		return err
	}
	if err := cli.CheckOutput(*f.output); err != nil {
		return err
	}
	kcpFlags, gardenFlags := f.kcp, f.garden
	noServerDryRun, parallel, accept := f.noServerDryRun, f.parallel, f.accept
	if !gardenFlags.set() {
		return errNoGarden
	}
	namespace, err := kcpFlags.runtimeNamespace()
	if err != nil {
		return err
	}
	kcpCfg, err := kcpFlags.restConfig()
	if err != nil {
		return err
	}
	kcpRequests := &migrate.Requests{}
	kcp, err := app.NewMigrationKCPClient(kcpRequests.Wrap(kcpCfg), namespace)
	if err != nil {
		return err
	}
	opCfg, err := f.landscape.load(ctx, kcp, namespace)
	if err != nil {
		return err
	}
	gardenNamespace := wire.GardenNamespace(opCfg.Gardener.Project)
	gardenCfg, err := gardenFlags.restConfig()
	if err != nil {
		return err
	}
	gardenRequests := &migrate.Requests{}
	// The garden client cannot write: every request but reads and dry runs is refused before it is sent.
	garden, err := app.NewMigrationGardenClient(gardenRequests.Wrap(gardenCfg), gardenNamespace)
	if err != nil {
		return err
	}
	m := &migrate.Migrator{KCP: kcp, Garden: garden, Options: migrate.Options{
		Namespace: namespace, GardenNamespace: gardenNamespace, Config: opCfg.ShootConfig(),
		Apply: apply, NoServerDryRun: *noServerDryRun, Parallel: *parallel, Progress: cli.NewPrinter(stderr).Say}}
	if ref := opCfg.Shoot.ACL.ConfigMap; ref != nil {
		key := client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}
		if key.Namespace == "" {
			key.Namespace = namespace
		}
		m.ACLConfigMap = &key
	}
	for _, a := range accept {
		m.Accept = append(m.Accept, migration.ParseAcceptance(a))
	}
	rep, err := m.Run(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w while reading the landscape: nothing was examined", cli.ErrInterrupted)
		}
		return err
	}
	if *f.reportFile != "" {
		if err := writeJSON(*f.reportFile, rep); err != nil {
			return err
		}
	}
	if err := cli.WriteReport(stdout, *f.output, rep, func(w io.Writer) error {
		if err := migrate.WriteText(w, rep); err != nil {
			return err
		}
		_, err := fmt.Fprintf(w, "Requests: garden: %s; KCP: %s\n", gardenRequests, kcpRequests)
		return err
	}); err != nil {
		return err
	}
	switch {
	case rep.Interrupted:
		return fmt.Errorf("%w after %d runtimes", cli.ErrInterrupted, len(rep.Items))
	case rep.Summary.Failed > 0:
		return errMigrationFailed
	}
	return nil
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}
