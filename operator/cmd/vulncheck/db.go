package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// vulndbModule is the module whose data/osv the database is built from.
const vulndbModule = "golang.org/x/vulndb"

// module is what `go mod download -json` tells about a downloaded module.
type module struct {
	Version string
	Dir     string
	Info    string
	Sum     string
	Error   string
}

// downloader fetches golang.org/x/vulndb at a version into the module cache.
type downloader func(version string) (module, error)

// runDB is `vulncheck db`: it prints the directory of the database of a vulndb version, building it first when the
// cache does not hold it.
func runDB(args []string, stdout, stderr io.Writer, download downloader) error {
	flags := flag.NewFlagSet("vulncheck db", flag.ContinueOnError)
	flags.SetOutput(stderr)
	version := flags.String("version", "", "version of "+vulndbModule+" to build the database from (required)")
	sum := flags.String("sum", "", "expected go.sum hash (h1:...) of that version; the build fails on another")
	cache := flags.String("cache", defaultCache(), "directory of the databases, one per version (env VULNDB_CACHE)")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *version == "" || flags.NArg() > 0 {
		return errors.New("usage: vulncheck db -version <version of " + vulndbModule + "> [-sum h1:...] [-cache dir]")
	}
	if strings.ContainsAny(*version, `/\`) || strings.HasPrefix(*version, ".") {
		return fmt.Errorf("invalid version %q", *version)
	}
	dir := filepath.Join(*cache, *version)
	if complete(dir) {
		_, err := fmt.Fprintln(stdout, dir)
		return err
	}

	start := time.Now()
	mod, err := download(*version)
	if err != nil {
		return err
	}
	if *sum != "" && mod.Sum != *sum {
		return fmt.Errorf("%s@%s has hash %s, expected %s", vulndbModule, *version, mod.Sum, *sum)
	}
	commitTime, err := infoTime(mod.Info)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*cache, 0o750); err != nil {
		return err
	}
	// Build next to the final directory and rename, so that an interrupted build leaves nothing that looks complete
	// and two builds at once (several clones, one cache) do not mix.
	tmp, err := os.MkdirTemp(*cache, "."+*version+".build-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	s, err := Build(filepath.Join(mod.Dir, "data", "osv"), tmp, commitTime)
	if err != nil {
		return fmt.Errorf("%s@%s: %w", vulndbModule, *version, err)
	}
	if err := os.Rename(tmp, dir); err != nil && !complete(dir) {
		return err
	}
	_, _ = fmt.Fprintf(stderr, "vulncheck: database of %d entries, %d modules, modified %s, from %s@%s in %s (%s)\n",
		s.Entries, s.Modules, s.Modified.Format(time.RFC3339), vulndbModule, *version, dir,
		time.Since(start).Round(100*time.Millisecond))
	_, err = fmt.Fprintln(stdout, dir)
	return err
}

// complete tells whether dir holds a database: Build writes index/db.json last, and only a finished build is renamed
// to its final name.
func complete(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, indexDir, "db.json"))
	return err == nil
}

func defaultCache() string {
	if d := os.Getenv("VULNDB_CACHE"); d != "" {
		return d
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "kim", "vulndb")
}

// goModDownload downloads the module with the go command, so GOPROXY, GOFLAGS, GONOSUMDB and the checksum database
// apply as for every other module.
func goModDownload(version string) (module, error) {
	var out, errOut bytes.Buffer
	cmd := exec.Command("go", "mod", "download", "-json", vulndbModule+"@"+version)
	cmd.Dir = os.TempDir() // outside any module: the download does not depend on, or touch, a go.mod
	cmd.Stdout, cmd.Stderr = &out, &errOut
	runErr := cmd.Run()
	var m module
	jsonErr := json.Unmarshal(out.Bytes(), &m)
	if runErr != nil || jsonErr != nil || m.Error != "" {
		msg := m.Error
		if msg == "" {
			msg = strings.TrimSpace(errOut.String())
		}
		err := errors.Join(runErr, jsonErr)
		if err == nil {
			err = errors.New("failed")
		}
		return module{}, fmt.Errorf("go mod download %s@%s: %s: %w", vulndbModule, version, msg, err)
	}
	return m, nil
}

// infoTime reads the commit time from the module's .info file ({"Version": ..., "Time": ...}).
func infoTime(path string) (time.Time, error) {
	b, err := fs.ReadFile(os.DirFS(filepath.Dir(path)), filepath.Base(path))
	if err != nil {
		return time.Time{}, err
	}
	var info struct{ Time time.Time }
	if err := json.Unmarshal(b, &info); err != nil {
		return time.Time{}, fmt.Errorf("%s: %w", path, err)
	}
	return info.Time, nil
}
