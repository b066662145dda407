package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/gardener/guard"
	"github.com/kyma-project/kim/core/domain/migration"
	"github.com/kyma-project/kim/operator/config"
	"github.com/kyma-project/kim/operator/migrate"
)

// listFlag collects a repeated flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// errMigrationFailed: some writes failed; the report says which.
var errMigrationFailed = errors.New("some runtimes could not be migrated (outcome Failed in the report); run again to retry them")

// runMigrate is `kim migrate`: see docs/operations/migration.md.
func runMigrate(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("kim migrate", flag.ContinueOnError)
	kcpFlags, gardenFlags := bindKCPFlags(fs), bindGardenFlags(fs)
	project := fs.String("gardener-project", "", "Gardener project (default: gardener.project of the operator configuration)")
	configFile := fs.String("config", "", "operator configuration file; default: the operator's ConfigMap (--config-map)")
	configMap := fs.String("config-map", "kim-manager-config", "ConfigMap (key config.yaml) with the operator configuration, in the KCP namespace")
	dryRun := fs.Bool("dry-run", true, "only report what would be done (the default); --apply acts")
	apply := fs.Bool("apply", false, "create the missing GardenerClusters and Runtimes")
	var accept listFlag
	fs.Var(&accept, "accept", "accept a difference the operator's first apply would write: [RUNTIME_ID_OR_SHOOT:]PATH (a path prefix as the report prints it; repeatable)")
	reportFile := fs.String("report", "", "also write the report as JSON to this file")
	output := fs.String("output", "text", "output format: text or json")
	fs.StringVar(output, "o", "text", "shorthand for --output")
	noServerDryRun := fs.Bool("no-server-dry-run", false, "do not ask the gardener-apiserver for dry runs of the operator's apply (compare only)")
	parallel := fs.Int("parallel", 8, "runtimes examined at once (each one may be a connection to the runtime)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: kim migrate [flags]\n\nTakes over the runtimes of the previous infrastructure manager: GardenerClusters for KEB's Kyma\n"+
			"resources that lack one, and Runtimes generated back from the shoots so that the operator adopts them unchanged.\n"+
			"Dry run by default; see docs/operations/migration.md.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := parseArgs(fs, args, true); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("unexpected arguments %v", fs.Args())
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if *apply && given["dry-run"] && *dryRun {
		return errors.New("--apply and --dry-run=true contradict each other")
	}
	if *output != "text" && *output != "json" {
		return fmt.Errorf("--output %q: want text or json", *output)
	}
	if !gardenFlags.set() {
		return errNoGarden
	}
	namespace, err := kcpFlags.runtimeNamespace()
	if err != nil {
		return err
	}
	scheme, err := migrate.Scheme()
	if err != nil {
		return err
	}
	kcpCfg, err := kcpFlags.restConfig()
	if err != nil {
		return err
	}
	kcpRequests := &migrate.Requests{}
	if kcpCfg, err = guard.Secure(kcpRequests.Wrap(kcpCfg), migrate.KCPPolicy(namespace)); err != nil {
		return fmt.Errorf("KCP kubeconfig: %w", err)
	}
	kcp, err := client.New(kcpCfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("KCP client: %w", err)
	}
	opCfg, err := loadOperatorConfig(ctx, kcp, namespace, *configFile, *configMap)
	if err != nil {
		return err
	}
	if *project != "" {
		opCfg.Gardener.Project = *project
	}
	if opCfg.Gardener.Project == "" {
		return errors.New("no Gardener project: set gardener.project in the operator configuration or --gardener-project")
	}
	gardenNamespace := "garden-" + opCfg.Gardener.Project
	gardenCfg, err := gardenFlags.restConfig()
	if err != nil {
		return err
	}
	gardenRequests := &migrate.Requests{}
	// The garden client cannot write: every request but reads and dry runs is refused before it is sent.
	if gardenCfg, err = guard.Secure(gardenRequests.Wrap(gardenCfg), guard.MigrationPolicy(gardenNamespace)); err != nil {
		return fmt.Errorf("garden kubeconfig: %w", err)
	}
	garden, err := client.New(gardenCfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("garden client: %w", err)
	}
	m := &migrate.Migrator{KCP: kcp, Garden: garden, Options: migrate.Options{
		Namespace: namespace, GardenNamespace: gardenNamespace, Config: opCfg.ShootConfig(),
		Apply: *apply, NoServerDryRun: *noServerDryRun, Parallel: *parallel}}
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
		return err
	}
	if *reportFile != "" {
		if err := writeJSON(*reportFile, rep); err != nil {
			return err
		}
	}
	if *output == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		if err := migrate.WriteText(stdout, rep); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Requests: garden: %s; KCP: %s\n", gardenRequests, kcpRequests)
	}
	if rep.Summary.Failed > 0 {
		return errMigrationFailed
	}
	return nil
}

// loadOperatorConfig reads the operator configuration from a file or the operator's ConfigMap in KCP.
func loadOperatorConfig(ctx context.Context, kcp client.Client, namespace, file, configMap string) (*config.OperatorConfig, error) {
	if file != "" {
		return config.Load(file)
	}
	cm := &corev1.ConfigMap{}
	if err := kcp.Get(ctx, client.ObjectKey{Namespace: namespace, Name: configMap}, cm); err != nil {
		return nil, fmt.Errorf("read the operator configuration from ConfigMap %s/%s (or give --config): %w", namespace, configMap, err)
	}
	data, ok := cm.Data["config.yaml"]
	if !ok {
		return nil, fmt.Errorf("ConfigMap %s/%s has no key config.yaml", namespace, configMap)
	}
	cfg, err := config.Parse([]byte(data))
	if err != nil {
		return nil, fmt.Errorf("operator configuration in ConfigMap %s/%s: %w", namespace, configMap, err)
	}
	return cfg, nil
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
