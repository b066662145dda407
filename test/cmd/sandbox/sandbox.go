package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kyma-project/kim/internal/cli"
	"github.com/kyma-project/kim/test/sandbox/faultproxy"
	"github.com/kyma-project/kim/test/sandbox/gardenbox"
	"github.com/kyma-project/kim/test/sandbox/runtimeapi"
	"github.com/kyma-project/kim/test/testenv"
)

// ReadyFile is created in --dir once the environment and the operator run (and the samples are applied).
const ReadyFile = "ready"

func runSandbox(parent context.Context, f sandboxFlags) (retErr error) {
	ctx, stop := signal.NotifyContext(parent, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	out := cli.NewPrinter(os.Stdout)

	if err := os.MkdirAll(f.dir, 0o755); err != nil {
		return fmt.Errorf("--dir: %w", err)
	}
	_ = os.Remove(filepath.Join(f.dir, ReadyFile)) // a leftover from an earlier run must not fool scripts
	logFile, err := os.Create(filepath.Join(f.dir, "operator.log"))
	if err != nil {
		return err
	}
	defer logFile.Close()
	cpLog, err := os.Create(filepath.Join(f.dir, "control-plane.log"))
	if err != nil {
		return err
	}
	defer cpLog.Close()
	var logOut io.Writer = logFile
	if f.verbose {
		logOut = io.MultiWriter(logFile, os.Stderr)
	}
	// Set before the garden starts: the in-process gardener-apiserver would otherwise claim the global logger.
	log := zap.New(zap.WriteTo(logOut), zap.UseDevMode(true))
	ctrl.SetLogger(log)

	mode, _ := runtimeapi.ParseMode(f.runtimeMode)
	if _, err := os.Stat(f.crdDir); err != nil {
		return fmt.Errorf("--crds %s: %w (run from the repository root or pass --crds)", f.crdDir, err)
	}
	f.operator.GardenerProject = defaultProject(f.operator.GardenerProject)

	out.Say("starting KCP (kube-apiserver + etcd) and the garden (kube-apiserver + etcd + gardener-apiserver)...")
	env, err := testenv.StartGarden(ctx, testenv.GardenOptions{Gardenlet: f.gardenlet, RuntimeAPIServers: mode, CRDDirectory: f.crdDir,
		Logger: log.WithName("sandbox"), ControlPlaneOutput: cpLog, Catalogue: catalogueFor(f.operator.GardenerProject)})
	if err != nil {
		return err
	}
	defer func() {
		out.Say("stopping the operator, the gardenlet and all API servers...")
		for _, name := range []string{ReadyFile, gardenbox.KCPKubeconfigFile, gardenbox.GardenKubeconfigFile} {
			_ = os.Remove(filepath.Join(f.dir, name))
		}
		if err := env.Stop(); err != nil {
			retErr = errors.Join(retErr, fmt.Errorf("stop: %w", err))
			return
		}
		out.Say("stopped; no processes or temporary directories are left")
	}()
	st := env.StartupTimes
	out.Say("KCP up in %s, garden up in %s, catalogue seeded in %s (%s)", round(st.KCP), round(st.Garden), round(st.Catalogue), describeCatalogue(env))
	if err := env.WriteKubeconfigs(f.dir); err != nil {
		return err
	}
	// The admission policies of config/admission (next to the CRDs), as `kubectl apply -k config/default` installs them.
	if admission := filepath.Join(filepath.Dir(filepath.Dir(f.crdDir)), "admission"); dirExists(admission) {
		if _, err := applySamples(ctx, env, admission, out); err != nil {
			return fmt.Errorf("admission policies: %w", err)
		}
	}

	// The operator gets its own context: it must stop (closing its watches) before the API servers do.
	opts := f.operator
	if opts.Config == nil && opts.ConfigFile == "" {
		opts.Config = sandboxConfig(env.Catalogue)
	}
	garden, faults, closeProxy, err := gardenForOperator(env, f.gardenFaults)
	if err != nil {
		return err
	}
	defer closeProxy(out)
	// The operator runs with the permissions that ship next to the CRDs (the bundle's RBAC, config/gardener), not as
	// the admin of the kubeconfigs above. Through the fault proxy its impersonation headers pass unchanged.
	root := filepath.Dir(filepath.Dir(filepath.Dir(f.crdDir)))
	op, err := testenv.StartOperatorFrom(ctx, root, env.KCP, garden, opts)
	if err == nil {
		faults(out)
	}
	if err != nil {
		return err
	}
	log.Info("operator started")
	defer func() {
		stopped := make(chan error, 1)
		go func() { stopped <- op.Stop() }()
		select {
		case err := <-stopped:
			retErr = errors.Join(retErr, err)
		case <-time.After(30 * time.Second):
			retErr = errors.Join(retErr, errors.New("operator did not stop within 30s"))
		}
	}()
	out.Say("operator running (kubeconfig validity %s, rotation at %.0f%%, deletion grace period %s)",
		f.operator.KubeconfigValidity, 100*f.operator.KubeconfigRotationFraction, f.operator.DeletionGracePeriod)

	var samples []sampleRef
	if !f.noSamples {
		if samples, err = applySamples(ctx, env, f.samplesDir, out); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(f.dir, ReadyFile), []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o644); err != nil {
		return err
	}
	printConnect(out, f.dir, f.operator.MetricsAddr)

	watchCtx := ctx
	if f.exitWhenReady {
		var cancel context.CancelFunc
		watchCtx, cancel = context.WithTimeout(ctx, f.timeout)
		defer cancel()
	}
	result := make(chan error, 1)
	go func() { result <- watchProgress(watchCtx, env, samples, f.exitWhenReady, out) }()
	select {
	case <-op.Done():
		return fmt.Errorf("operator stopped: %w", op.Err())
	case err := <-result:
		if f.exitWhenReady {
			if err != nil && errors.Is(watchCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
				return fmt.Errorf("timeout after %s: %w", f.timeout, err)
			}
			return err
		}
		if ctx.Err() == nil && err != nil {
			return err
		}
	}
	<-ctx.Done()
	out.Say("interrupted")
	return nil
}

func round(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }

func printConnect(out *cli.Printer, dir, metricsAddr string) {
	out.Say("ready: %s", filepath.Join(dir, ReadyFile))
	out.Say("connect:  kubectl --kubeconfig %s get kim -A", filepath.Join(dir, gardenbox.KCPKubeconfigFile))
	out.Say("          kubectl --kubeconfig %s get shoots -A", filepath.Join(dir, gardenbox.GardenKubeconfigFile))
	out.Say("logs:     %s, %s", filepath.Join(dir, "operator.log"), filepath.Join(dir, "control-plane.log"))
	if metricsAddr != "0" && metricsAddr != "" {
		out.Say("metrics:  curl -k -H \"Authorization: Bearer <token>\" https://%s/metrics  (a KCP token allowed to get /metrics)", metricsAddr)
	}
}

func dirExists(dir string) bool {
	st, err := os.Stat(dir)
	return err == nil && st.IsDir()
}

// gardenForOperator is the garden the operator talks to: the garden itself, or with --garden-faults a fault proxy in
// front of it. The proxy starts without faults, so granting the operator's permissions and its start are not
// disturbed; on switches them on, closeProxy stops the proxy and prints its counts.
func gardenForOperator(env *gardenbox.Env, share float64) (garden *rest.Config, on func(*cli.Printer), closeProxy func(*cli.Printer), err error) {
	if share == 0 {
		return env.Garden, func(*cli.Printer) {}, func(*cli.Printer) {}, nil
	}
	p, err := faultproxy.New(env.Garden, faultproxy.Options{Share: share})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("garden fault proxy: %w", err)
	}
	on = func(out *cli.Printer) {
		p.Enable(true)
		out.Say("garden faults on: %.0f%% of the operator's garden requests fail (429/500/503/held), watches are dropped (proxy %s)", 100*share, p.URL())
	}
	return p.ClientConfig(), on, func(out *cli.Printer) {
		s := p.Stats()
		out.Say("garden fault proxy: %d requests, faults %v", s.Requests(), s.Faults)
		_ = p.Close()
	}, nil
}
