package collector

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

type constant struct {
	desc *prometheus.Desc
	v    float64
}

func (c *constant) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }
func (c *constant) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, c.v)
}

func TestSwappableCollectsFromTheLatestSourceAndRegistersOnce(t *testing.T) {
	desc := prometheus.NewDesc("kim_test_swappable", "test", nil, nil)
	s := &Swappable{Describes: &constant{desc: desc}}
	if n := testutil.CollectAndCount(s); n != 0 {
		t.Fatalf("%d metrics before Use, want 0", n)
	}
	s.Use(&constant{desc: desc, v: 1})
	s.Use(&constant{desc: desc, v: 2}) // a second operator in the process: no duplicate registration
	if !s.registered {
		t.Fatal("not registered")
	}
	if v := testutil.ToFloat64(s); v != 2 {
		t.Fatalf("value %v, want 2 (the latest source)", v)
	}
}
