// Command vulncheck is the part of `make vulncheck` that govulncheck does not do here.
//
// `vulncheck db` builds the Go vulnerability database without vuln.go.dev, which our build machines cannot reach:
// the database's source, the module golang.org/x/vulndb (its data/osv holds one OSV entry per vulnerability), comes
// from the Go module proxy like any module, and it writes the v1 layout that `govulncheck -db file://DIR` reads
// (index/db.json, index/modules.json, index/vulns.json, ID/<id>.json). It prints DIR. The database is kept outside
// the clone, one directory per vulndb version (default $XDG_CACHE_HOME/kim/vulndb or ~/.cache/kim/vulndb;
// VULNDB_CACHE or -cache override it), so a second run only prints it.
//
// `vulncheck report` reads govulncheck's JSON output of each module, prints the vulnerabilities our code calls with
// example traces, and fails (exit 3, like govulncheck) on a called one unless hack/vulncheck-accepted.txt accepts it
// with a reason; it also fails on an accepted one that is no longer called, so the list cannot outlive its reasons.
//
// It lives in operator/cmd rather than hack/ (scripts only) so that it is vetted, linted and tested with the main
// module; the manager does not import it.
package main

import (
	"errors"
	"fmt"
	"os"
)

func main() {
	err := errors.New("usage: vulncheck db|report [flags]")
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "db":
			err = runDB(os.Args[2:], os.Stdout, os.Stderr, goModDownload)
		case "report":
			err = runReport(os.Args[2:], os.Stdout, os.Stderr)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "vulncheck:", err)
		if errors.Is(err, errCalled) {
			os.Exit(3)
		}
		os.Exit(1)
	}
}
