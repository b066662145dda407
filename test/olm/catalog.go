package olm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Entry is one bundle of a catalog channel.
type Entry struct {
	// BundleDir is the bundle directory (manifests/ and metadata/) opm renders.
	BundleDir string
	// Name is the bundle's name in the catalog: its CSV's name.
	Name string
	// SkipRange is the versions this bundle replaces (hack/catalog.sh writes `<VERSION`); "" : none.
	SkipRange string
}

// WriteCatalog writes a file-based catalog of package pkg into dir with opm, shaped as hack/catalog.sh shapes the
// release's catalog (opm init, opm render of each bundle, one olm.channel), and validates it with opm. Rendered from
// a directory, a bundle has no image: its manifests are in the catalog as olm.bundle.object properties, which OLM
// installs without an unpack job.
func WriteCatalog(ctx context.Context, opm, dir, pkg, channel string, entries []Entry) error {
	if err := os.MkdirAll(filepath.Join(dir, pkg), 0o700); err != nil {
		return err
	}
	var blobs []string
	out, err := run(ctx, opm, "init", pkg, "--default-channel="+channel, "--output=yaml")
	if err != nil {
		return err
	}
	blobs = append(blobs, out)
	lines := []string{"schema: olm.channel", "package: " + pkg, "name: " + channel, "entries:"}
	for _, e := range entries {
		out, err := run(ctx, opm, "render", e.BundleDir, "--output=yaml")
		if err != nil {
			return err
		}
		blobs = append(blobs, out)
		lines = append(lines, "- name: "+e.Name)
		if e.SkipRange != "" {
			lines = append(lines, "  skipRange: '"+e.SkipRange+"'")
		}
	}
	blobs = append(blobs, strings.Join(lines, "\n")+"\n")
	if err := os.WriteFile(filepath.Join(dir, pkg, "index.yaml"), []byte(strings.Join(blobs, "---\n")), 0o600); err != nil {
		return err
	}
	if _, err := run(ctx, opm, "validate", dir); err != nil {
		return err
	}
	return nil
}

// Registry is `opm serve` of a file-based catalog: the gRPC registry API a CatalogSource with spec.address reads.
type Registry struct {
	// Address is host:port of the gRPC server, on loopback.
	Address string
	cmd     *exec.Cmd
	done    chan struct{}
}

// Serve starts `opm serve dir` on a free loopback port and returns once it accepts connections; its output goes to
// logPath. Stop it with Stop.
func Serve(opm, dir, logPath string) (*Registry, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("find a free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	// Its profiling endpoint would take 127.0.0.1:6060 (a second server, or anything else there, fails to start), and
	// its termination log would go to /dev/termination-log: both are moved next to the log.
	cmd := exec.Command(opm, "serve", dir, fmt.Sprintf("--port=%d", port), "--pprof-addr=127.0.0.1:0",
		"--termination-log="+logPath+".termination")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return nil, fmt.Errorf("start opm serve: %w", err)
	}
	r := &Registry{Address: fmt.Sprintf("127.0.0.1:%d", port), cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		_ = log.Close()
		close(r.done)
	}()
	deadline := time.Now().Add(time.Minute)
	for {
		c, err := net.DialTimeout("tcp", r.Address, time.Second)
		if err == nil {
			_ = c.Close()
			return r, nil
		}
		select {
		case <-r.done:
			return nil, fmt.Errorf("opm serve exited (log %s)", logPath)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			r.Stop()
			return nil, errors.New("opm serve does not accept connections after 1m (log " + logPath + ")")
		}
	}
}

// Stop ends the server.
func (r *Registry) Stop() {
	_ = r.cmd.Process.Kill()
	<-r.done
}

func run(ctx context.Context, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", filepath.Base(name), strings.Join(args, " "), err, stderr.String())
	}
	return string(out), nil
}
