package metric_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kyma-project/kim/operator/version"
	"github.com/kyma-project/kim/operator/version/metric"
)

func TestBuildInfoMetric(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(metric.NewCollector(version.Info{Version: "1.2.3", GitCommit: "abc", Branch: "main", GoVersion: "go1.26.5",
		GoOS: "linux", GoArch: "arm64"}))
	want := `# HELP kim_build_info Build stamp of the running manager; the value is always 1.
# TYPE kim_build_info gauge
kim_build_info{branch="main",goarch="arm64",goos="linux",goversion="go1.26.5",revision="abc",version="1.2.3"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), metric.BuildInfo); err != nil {
		t.Error(err)
	}
}
