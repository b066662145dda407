package harness

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Samples is one scrape of the Prometheus text format: one line per series, "name{labels} value".
type Samples []string

func (m *Manager) Scrape(ctx context.Context) (Samples, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.metrics, nil)
	if err != nil {
		return nil, fmt.Errorf("metrics request: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", m.metrics, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("read metrics: %w", err)
	}
	var out Samples
	for _, line := range strings.Split(string(body), "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	return out, nil
}

// Sum adds the values of the series of metric name whose labels contain every one of the given label pairs
// (written as in the exposition format, e.g. `controller="`+readyController+`"`).
func (s Samples) Sum(name string, labels ...string) float64 {
	total := 0.0
	for _, line := range s {
		if !s.matches(line, name, labels) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err == nil {
			total += v
		}
	}
	return total
}

// ByLabel is Sum split by the value of one label.
func (s Samples) ByLabel(name, label string, labels ...string) map[string]float64 {
	out := map[string]float64{}
	for _, line := range s {
		if !s.matches(line, name, labels) {
			continue
		}
		_, rest, ok := strings.Cut(line, label+`="`)
		if !ok {
			continue
		}
		value, _, _ := strings.Cut(rest, `"`)
		if v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64); err == nil {
			out[value] += v
		}
	}
	return out
}

func (s Samples) Has(name string, labels ...string) bool {
	for _, line := range s {
		if s.matches(line, name, labels) {
			return true
		}
	}
	return false
}

func (Samples) matches(line, name string, labels []string) bool {
	rest, ok := strings.CutPrefix(line, name)
	if !ok || (rest != "" && rest[0] != '{' && rest[0] != ' ') {
		return false
	}
	for _, l := range labels {
		if !strings.Contains(rest, l) {
			return false
		}
	}
	return true
}
