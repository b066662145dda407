package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testdata/report/kim.json is govulncheck's JSON stream in the shape of protocol v1.0.0: GO-2099-0001 called (with
// its module- and package-level findings too), GO-2099-0002 called in golang.org/x/net and in the standard library,
// GO-2099-0003 imported but not called, GO-2099-0004 only required.
func fixtureScan(t *testing.T) *scan {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "report", "kim.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	s, err := readScan("kim", f)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func acceptedFile(t *testing.T, content string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "accepted.txt")
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

func TestReportFailsOnCalledVulnerabilities(t *testing.T) {
	var out bytes.Buffer
	err := report([]*scan{fixtureScan(t)}, nil, "", &out)
	if !errors.Is(err, errCalled) {
		t.Fatalf("report: %v, want the called vulnerabilities", err)
	}
	if got, want := err.Error(), "called vulnerabilities: kim: GO-2099-0001, kim: GO-2099-0002, kim: GO-2099-0002"; got != want {
		t.Errorf("error %q, want %q", got, want)
	}
	for _, want := range []string{
		"vulncheck: kim (govulncheck v1.9.0, standard library of go1.26.11): 3 called (0 accepted), 1 in imported packages but not called, 1 in required modules only",
		"  GO-2099-0001 example.com/lib@v1.0.0 (fixed in v1.2.3): Fixture: a parser that reads out of bounds\n" +
			"      operator/controllers/registrycache/trigger.go:35:11: registrycache.Trigger.ServeHTTP -> parse.Parse\n" +
			"    NOT ACCEPTED",
		"  GO-2099-0002 golang.org/x/net@v0.59.0 (fixed in v0.60.0)",
		"      adapters/kube/response_budget.go:83:23: kube.budgetBody.Read -> ... -> http2.Framer.ReadFrame",
		"  GO-2099-0002 stdlib@v1.26.8 (fixed in go1.26.9)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report misses %q:\n%s", want, out.String())
		}
	}
	for _, notCalled := range []string{"GO-2099-0003", "GO-2099-0004"} {
		if strings.Contains(out.String(), notCalled) {
			t.Errorf("the report lists %s, which is not called:\n%s", notCalled, out.String())
		}
	}
}

func TestReportAcceptsPerVulnerabilityAndModule(t *testing.T) {
	all := "# reviewed\nkim GO-2099-0001 example.com/lib no fixed release yet\n\nkim GO-2099-0002 golang.org/x/net test only\nkim GO-2099-0002 stdlib the image's Go\n"
	for _, tc := range []struct {
		reason, accepted string
		wantErr          string
	}{
		{"every called one accepted", all, ""},
		{"accepted in golang.org/x/net but not in the standard library", "kim GO-2099-0001 example.com/lib r\nkim GO-2099-0002 golang.org/x/net r\n", "kim: GO-2099-0002"},
		{"accepted for another vulnerable module", "kim GO-2099-0001 example.com/other r\nkim GO-2099-0002 golang.org/x/net r\nkim GO-2099-0002 stdlib r\n", "kim: GO-2099-0001"},
		{"accepted in another scanned module", "api GO-2099-0001 example.com/lib r\nkim GO-2099-0002 golang.org/x/net r\nkim GO-2099-0002 stdlib r\n", "kim: GO-2099-0001"},
		{"an accepted one that is not called is stale", all + "kim GO-2099-0003 example.com/other imported only\n", "1 stale entries"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			file := acceptedFile(t, tc.accepted)
			accepted, err := readAccepted(file)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			err = report([]*scan{fixtureScan(t)}, accepted, file, &out)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("report: %v\n%s", err, out.String())
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("report: %v, want an error with %q\n%s", err, tc.wantErr, out.String())
			}
			if tc.wantErr == "" && strings.Count(out.String(), "ACCEPTED ("+file) != 3 {
				t.Errorf("want the three called ones shown as accepted with their line:\n%s", out.String())
			}
		})
	}
}

func TestReadAcceptedRejectsBadLines(t *testing.T) {
	for _, content := range []string{
		"kim GO-2099-0001 example.com/lib\n",                                       // no reason
		"GO-2099-0001 example.com/lib reason\n",                                    // no scanned module
		"kim CVE-2099-1 example.com/lib reason\n",                                  // not a Go ID
		"kim GO-2099-0001 example.com/lib a\nkim GO-2099-0001 example.com/lib b\n", // twice
	} {
		if _, err := readAccepted(acceptedFile(t, content)); err == nil {
			t.Errorf("readAccepted(%q): no error", content)
		}
	}
}

func TestReadScanRejectsWhatIsNotGovulncheckOutput(t *testing.T) {
	for _, input := range []string{"", "{\"progress\":{\"message\":\"x\"}}\n", "Scanning your code...\n"} {
		if _, err := readScan("kim", strings.NewReader(input)); err == nil {
			t.Errorf("readScan(%q): no error", input)
		}
	}
}

func TestRunReportReadsFiles(t *testing.T) {
	var out bytes.Buffer
	err := runReport([]string{"-accepted", acceptedFile(t, "github.com/kyma-project/kim GO-2099-0001 example.com/lib r\n"),
		"github.com/kyma-project/kim=" + filepath.Join("testdata", "report", "kim.json")}, &out, &bytes.Buffer{})
	if !errors.Is(err, errCalled) || strings.Contains(err.Error(), "GO-2099-0001") ||
		!strings.Contains(err.Error(), "github.com/kyma-project/kim: GO-2099-0002") {
		t.Fatalf("runReport: %v, want GO-2099-0002 only\n%s", err, out.String())
	}
	if err := runReport(nil, &out, &bytes.Buffer{}); err == nil {
		t.Error("runReport without files: no error")
	}
}
