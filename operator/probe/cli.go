package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim/internal/cli"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// ErrFailed: the probe ran and failed (the result says where); the command exits non-zero.
var ErrFailed = errors.New("probe failed")

// CLI is the command line of the probe, shared by `kim probe` and the probe binary of the CronJob.
type CLI struct {
	templateFile string
	runtimeIDs   string
	opts         Options
	pushgateway  string
	metricsFile  string
	instance     string
	output       string
	// Progress, when set, gets a line for each step of the run as it goes (see Options.Progress).
	Progress func(format string, args ...any)
}

// Bind registers the probe's flags.
func (c *CLI) Bind(fs *pflag.FlagSet) {
	fs.StringVar(&c.templateFile, "runtime", "/etc/kim-probe/runtime.yaml",
		"the Runtime to provision, as KEB sends it for the probe's plan (the probe gives it its runtime ID and a fresh shoot name)")
	fs.StringVar(&c.runtimeIDs, "runtime-ids", "",
		"comma-separated runtime IDs (lower-case UUIDs) the probe owns, those of the Role and admission policy of config/probe: "+
			"a run deletes the Runtimes earlier runs left under them and provisions under a free one; empty: a fresh random ID, and no earlier run's Runtime is deleted")
	fs.DurationVar(&c.opts.ReadyTimeout, "ready-timeout", 60*time.Minute, "how long provisioning may take (KEB waits 60 minutes)")
	fs.DurationVar(&c.opts.DeleteTimeout, "delete-timeout", 60*time.Minute, "how long the deletion of a Runtime may take (KEB waits 1 hour)")
	fs.DurationVar(&c.opts.PollInterval, "poll-interval", 10*time.Second, "how often the Runtime is read (KEB: every 10 s)")
	fs.BoolVar(&c.opts.KeepFailed, "keep-failed", true, "leave the Runtime of a failed probe for diagnosis; the next run with the same --runtime-ids deletes it")
	fs.StringVar(&c.pushgateway, "pushgateway", "", "push the probe's metrics to this Prometheus Pushgateway URL (job kim-probe)")
	fs.StringVar(&c.metricsFile, "metrics-file", "", "write the probe's metrics to this file (Prometheus text format, e.g. for node-exporter's textfile collector)")
	fs.StringVar(&c.instance, "instance", "", "instance label of the pushed metrics (default: the KCP namespace)")
	fs.StringVarP(&c.output, "output", "o", "text", "result format: text, json or yaml")
}

// Execute runs one probe in namespace of kcp, prints the result to out and exports the metrics. It returns
// ErrFailed (wrapped with the failed phase) when the probe failed, another error when the metrics could not be
// exported or the template is unusable.
func (c *CLI) Execute(ctx context.Context, kcp client.Client, namespace string, out io.Writer) error {
	if err := cli.CheckOutput(c.output); err != nil {
		return err
	}
	ids, err := ParseRuntimeIDs(c.runtimeIDs)
	if err != nil {
		return err
	}
	tpl, err := LoadTemplate(c.templateFile)
	if err != nil {
		return err
	}
	opts := c.opts
	opts.Namespace, opts.Template, opts.RuntimeIDs, opts.Progress = namespace, tpl, ids, c.Progress
	res := (&Prober{KCP: kcp, Options: opts}).Run(ctx)
	if err := cli.WriteReport(out, c.output, res, func(w io.Writer) error { printResult(w, res, len(ids) > 0); return nil }); err != nil {
		return err
	}
	if res.Interrupted {
		// Stopped from outside: no verdict on the landscape, so no metrics that would alert on it.
		return fmt.Errorf("%w in phase %s (metrics not exported)", cli.ErrInterrupted, res.Failed)
	}
	m := NewMetrics(nil)
	m.Observe(res)
	var exportErr error
	if c.metricsFile != "" {
		exportErr = errors.Join(exportErr, m.WriteFile(c.metricsFile))
	}
	if c.pushgateway != "" {
		instance := c.instance
		if instance == "" {
			instance = namespace
		}
		exportErr = errors.Join(exportErr, m.Push(c.pushgateway, instance))
	}
	if !res.Success {
		return errors.Join(fmt.Errorf("%w in phase %s: %s", ErrFailed, res.Failed, res.Error), exportErr)
	}
	return exportErr
}

// LoadTemplate reads a Runtime manifest.
func LoadTemplate(path string) (*imv1.Runtime, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("the probe's Runtime template: %w", err)
	}
	rt := &imv1.Runtime{}
	if err := yaml.UnmarshalStrict(raw, rt); err != nil {
		return nil, fmt.Errorf("the probe's Runtime template %s: %w", path, err)
	}
	return rt, nil
}

// printResult prints a result for people; owned says whether the run used --runtime-ids (whose next run deletes a
// kept Runtime).
func printResult(out io.Writer, r Result, owned bool) {
	outcome := "OK"
	switch {
	case r.Interrupted:
		outcome = "INTERRUPTED in phase " + r.Failed
	case !r.Success:
		outcome = "FAILED in phase " + r.Failed
	}
	fmt.Fprintf(out, "kim probe: %s (runtime %s, shoot %s, %s)\n", outcome, r.RuntimeID, r.Shoot, r.Finished.Sub(r.Started).Round(time.Millisecond))
	for _, ph := range r.Phases {
		status := "ok"
		if !ph.OK {
			status = "FAILED"
		}
		fmt.Fprintf(out, "  %-8s %-7s %s\n", ph.Name, status, ph.Duration.Round(time.Millisecond))
	}
	if r.OrphansCleaned > 0 {
		fmt.Fprintf(out, "  deleted %d Runtime(s) left by earlier probes\n", r.OrphansCleaned)
	}
	if r.User != "" {
		fmt.Fprintf(out, "  the issued kubeconfig authenticates as %s\n", r.User)
	}
	if r.Error != "" {
		fmt.Fprintf(out, "  error: %s\n", r.Error)
	}
	switch {
	case r.Kept && owned:
		fmt.Fprintf(out, "  the Runtime is kept for diagnosis (kubectl get rt %s -o yaml); the next probe with the same --runtime-ids deletes it\n", r.RuntimeID)
	case r.Kept:
		fmt.Fprintf(out, "  the Runtime is kept for diagnosis (kubectl get rt %s -o yaml); delete it when done (kubectl delete rt %s)\n", r.RuntimeID, r.RuntimeID)
	}
}
