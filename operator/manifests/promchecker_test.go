package manifests_test

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/VictoriaMetrics/metricsql"

	"github.com/kyma-project/kim/test/metrics"
)

// labelSet is the set of label names of a series or expression result; nil means unknown (a metric the
// operator does not define, whose labels this test does not know).
type labelSet map[string]bool

func setOf(names ...string) labelSet {
	s := labelSet{}
	for _, n := range names {
		s[n] = true
	}
	return s
}

// targetLabels are the labels the Prometheus Operator's ServiceMonitor scrape adds to every series of the target.
var targetLabels = []string{"job", "instance", "namespace", "pod", "service", "endpoint", "container"}

// promChecker checks PromQL expressions against the metrics the code registers.
type promChecker struct {
	catalogue metrics.Catalogue
	// recorded are the series of recording rules, with the labels of their expressions.
	recorded map[string]labelSet
}

// seriesLabels resolves a series name: the operator's metrics with their labels; controller-runtime's metrics by
// name (they are registered in its registry; their labels are not visible to this test); Prometheus' synthetic `up`.
func (c *promChecker) seriesLabels(name string) (labelSet, error) {
	if _, labels, ok := c.catalogue.Series(name); ok {
		// Prometheus adds the target's labels to every scraped series (the ServiceMonitor's job, namespace, pod, ...).
		return setOf(append(labels, targetLabels...)...), nil
	}
	if l, ok := c.recorded[name]; ok {
		return l, nil
	}
	if name == "up" {
		return setOf("job", "instance"), nil
	}
	if !strings.HasPrefix(name, "kim_") && metrics.InControllerRuntimeRegistry(name) {
		return nil, nil
	}
	return nil, fmt.Errorf("metric %s is not registered by the operator (known: %v)", name, c.catalogue.Names())
}

// check validates every selector and label of the expression and returns the labels of its result (nil: unknown)
// and whether it is a scalar.
func (c *promChecker) check(e metricsql.Expr) (labelSet, bool, []error) {
	switch e := e.(type) {
	case *metricsql.NumberExpr, *metricsql.StringExpr, *metricsql.DurationExpr:
		return labelSet{}, true, nil
	case *metricsql.MetricExpr:
		return c.checkSelector(e)
	case *metricsql.RollupExpr:
		return c.check(e.Expr)
	case *metricsql.FuncExpr:
		return c.checkFunc(e)
	case *metricsql.AggrFuncExpr:
		return c.checkAggr(e)
	case *metricsql.BinaryOpExpr:
		return c.checkBinary(e)
	default:
		return nil, false, []error{fmt.Errorf("expression %T (%s) is not understood by this test; extend it", e, e.AppendString(nil))}
	}
}

func (c *promChecker) checkSelector(e *metricsql.MetricExpr) (labelSet, bool, []error) {
	var errs []error
	var out labelSet
	for _, group := range e.LabelFilterss {
		name := ""
		for _, f := range group {
			if f.Label == "__name__" && !f.IsRegexp && !f.IsNegative {
				name = f.Value
			}
		}
		labels, err := c.seriesLabels(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, f := range group {
			if f.Label != "__name__" && labels != nil && !labels[f.Label] {
				errs = append(errs, fmt.Errorf("%s has no label %q (labels: %v)", name, f.Label, sortedNames(labels)))
			}
		}
		out = labels
	}
	return out, false, errs
}

func (c *promChecker) checkFunc(e *metricsql.FuncExpr) (labelSet, bool, []error) {
	var errs []error
	var args []labelSet
	for _, a := range e.Args {
		l, _, es := c.check(a)
		errs = append(errs, es...)
		args = append(args, l)
	}
	switch e.Name {
	case "time", "vector", "scalar":
		return labelSet{}, e.Name != "vector", errs
	case "absent", "absent_over_time":
		return labelSet{}, false, errs // the equality matchers become labels; none are used for labels here
	case "histogram_quantile":
		if len(args) < 2 || args[1] == nil {
			return nil, false, errs
		}
		if !args[1]["le"] {
			errs = append(errs, errors.New("histogram_quantile over a vector without the label le"))
		}
		out := labelSet{}
		for l := range args[1] {
			if l != "le" {
				out[l] = true
			}
		}
		return out, false, errs
	}
	for _, l := range args { // rate, increase, *_over_time, timestamp, ...: the labels of the vector argument
		if len(args) > 0 {
			return l, false, errs
		}
	}
	return labelSet{}, false, errs
}

func (c *promChecker) checkAggr(e *metricsql.AggrFuncExpr) (labelSet, bool, []error) {
	var errs []error
	var in labelSet
	for _, a := range e.Args {
		l, scalar, es := c.check(a)
		errs = append(errs, es...)
		if !scalar {
			in = l
		}
	}
	for _, l := range e.Modifier.Args {
		if in != nil && !in[l] {
			errs = append(errs, fmt.Errorf("%s %s (%s): the aggregated series have no label %q", e.Name, e.Modifier.Op, strings.Join(e.Modifier.Args, ","), l))
		}
	}
	switch {
	case e.Name == "topk" || e.Name == "bottomk":
		return in, false, errs
	case strings.EqualFold(e.Modifier.Op, "by"):
		return setOf(e.Modifier.Args...), false, errs
	case strings.EqualFold(e.Modifier.Op, "without") && in != nil:
		out := labelSet{}
		for l := range in {
			out[l] = true
		}
		for _, l := range e.Modifier.Args {
			delete(out, l)
		}
		return out, false, errs
	case strings.EqualFold(e.Modifier.Op, "without"):
		return nil, false, errs
	}
	return labelSet{}, false, errs
}

func (c *promChecker) checkBinary(e *metricsql.BinaryOpExpr) (labelSet, bool, []error) {
	left, lScalar, errs := c.check(e.Left)
	right, rScalar, rErrs := c.check(e.Right)
	errs = append(errs, rErrs...)
	for _, l := range e.GroupModifier.Args {
		if left != nil && right != nil && !left[l] && !right[l] {
			errs = append(errs, fmt.Errorf("%s(%s): neither side has the label %q", e.GroupModifier.Op, strings.Join(e.GroupModifier.Args, ","), l))
		}
	}
	for _, l := range e.JoinModifier.Args {
		if right != nil && !right[l] {
			errs = append(errs, fmt.Errorf("%s(%s): the right side has no label %q", e.JoinModifier.Op, strings.Join(e.JoinModifier.Args, ","), l))
		}
	}
	switch {
	case lScalar && rScalar:
		return labelSet{}, true, errs
	case lScalar:
		return right, false, errs
	case strings.EqualFold(e.Op, "or") && left != nil && right != nil:
		out := labelSet{}
		for l := range left {
			out[l] = true
		}
		for l := range right {
			out[l] = true
		}
		return out, false, errs
	}
	if len(e.JoinModifier.Args) > 0 && left != nil {
		out := labelSet{}
		for l := range left {
			out[l] = true
		}
		for _, l := range e.JoinModifier.Args {
			out[l] = true
		}
		return out, false, errs
	}
	return left, false, errs
}

func sortedNames(s labelSet) []string {
	out := make([]string, 0, len(s))
	for n := range s {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func newPromChecker(t *testing.T) *promChecker {
	t.Helper()
	cat, err := metrics.Load()
	if err != nil {
		t.Fatal(err)
	}
	return &promChecker{catalogue: cat, recorded: map[string]labelSet{}}
}
