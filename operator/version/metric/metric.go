// Package metric exports the build stamp of package version as the gauge kim_build_info.
package metric

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kyma-project/kim/operator/version"
)

// BuildInfo is the name of the gauge NewCollector returns.
const BuildInfo = "kim_build_info"

// NewCollector returns the gauge kim_build_info with the constant value 1, the Prometheus convention for exporting
// a build stamp, with the labels of prometheus/common/version's collector (version, revision, branch, goversion,
// goos, goarch) that shared dashboards join on to see which version produced a series.
func NewCollector(i version.Info) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: BuildInfo,
		Help: "Build stamp of the running manager; the value is always 1.",
		ConstLabels: prometheus.Labels{
			"version":   i.Version,
			"revision":  i.GitCommit,
			"branch":    i.Branch,
			"goversion": i.GoVersion,
			"goos":      i.GoOS,
			"goarch":    i.GoArch,
		},
	}, func() float64 { return 1 })
}
