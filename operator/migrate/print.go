package migrate

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/kyma-project/kim/core/domain/migration"
)

// WriteText prints the report for people: one line per runtime (outcome, the planned or performed actions, or why
// nothing is written), its differences below it, and the summary.
func WriteText(w io.Writer, rep migration.Report) error {
	mode := "dry run: nothing was written (run with --apply to act)"
	if !rep.DryRun {
		mode = "applied"
	}
	fmt.Fprintf(w, "kim migrate (%s): KCP namespace %s, Gardener project namespace %s\n\n", mode, rep.Namespace, rep.GardenNamespace)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUNTIME\tSHOOT\tCREATED BY\tOUTCOME\tACTIONS")
	for _, it := range rep.Items {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", it.RuntimeID, dash(it.Shoot), dash(it.CreatedBy), it.Outcome, actions(it))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, it := range rep.Items {
		if len(it.Problems) == 0 && !hasDifferences(it) {
			continue
		}
		fmt.Fprintf(w, "\n%s (shoot %s): %s\n", it.RuntimeID, dash(it.Shoot), it.Outcome)
		for _, p := range it.Problems {
			fmt.Fprintf(w, "  %s: %s\n", p.Reason, p.Message)
		}
		for _, d := range it.Differences {
			fmt.Fprintf(w, "  %-26s %s: %s -> %s\n", "["+string(d.Kind)+"]", d.Path, dash(d.Have), d.Want)
		}
		if it.VerifiedBy != "" && hasDifferences(it) {
			fmt.Fprintf(w, "  (differences found by %s)\n", it.VerifiedBy)
		}
	}
	s := rep.Summary
	verb := "to create"
	if !rep.DryRun {
		verb = "created"
	}
	fmt.Fprintf(w, "\nSummary: %d runtimes: %d already migrated; GardenerClusters %s: %d; Runtimes %s: %d; "+
		"credentials binding switches (by the operator): %d; skipped (bad input, nothing written): %d; "+
		"refused (differences or problems, no Runtime): %d; failed: %d\n",
		s.Runtimes, s.AlreadyMigrated, verb, s.GardenerClusters, verb, s.RuntimesCreated, s.CredentialsBindingSwitch, s.Skipped, s.Refused, s.Failed)
	if rep.Interrupted {
		fmt.Fprintf(w, "Interrupted: only the %d runtimes finished before Ctrl-C are reported; run again for the rest\n", len(rep.Items))
	}
	return nil
}

func hasDifferences(it migration.Item) bool { return len(it.Differences) > 0 }

func actions(it migration.Item) string {
	if len(it.Actions) == 0 {
		if len(it.Problems) > 0 {
			return "none: " + string(it.Problems[0].Reason)
		}
		return "none"
	}
	var out []string
	for _, a := range it.Actions {
		s := string(a.Kind)
		switch {
		case a.ByOperator:
			s += " (by the operator)"
		case a.Error != "":
			s += " FAILED: " + a.Error
		case a.Done:
			s += " (done)"
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
