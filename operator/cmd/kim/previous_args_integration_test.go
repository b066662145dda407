package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	shootdomain "github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/operator/legacymetrics"
	"github.com/kyma-project/kim/test/testenv"
	"github.com/kyma-project/kim/test/testenv/keb"
)

// TestMigrationPreviousHelmArgumentsIntegration starts the manager binary as the previous infrastructure manager's
// production Deployment would, unchanged: its Helm-rendered arguments (operator/cmd/manager/testdata/
// previous-all-flags.yaml, every flag of its main.go) and its converter configuration with the files it names
// (operator/config/testdata/previous), without a ConfigMap of this operator. It becomes healthy, logs a deprecation
// warning per previous flag, and works (a GardenerCluster gets its kubeconfig). Only the values that point to this
// machine are replaced: the files, the project of the test garden and free ports.
func TestMigrationPreviousHelmArgumentsIntegration(t *testing.T) {
	env := sharedEnv(t)
	ctx := context.Background()
	raw, err := os.ReadFile(filepath.Join("..", "manager", "testdata", "previous-all-flags.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Args []string `json:"args"`
	}
	if err := yaml.UnmarshalStrict(raw, &doc); err != nil {
		t.Fatal(err)
	}
	metrics, probes, watcher := freeAddress(t), freeAddress(t), freeAddress(t)
	_, watcherPort, _ := net.SplitHostPort(watcher)
	converter := previousConverterConfig(t, env.Catalogue.Project)
	// The listener port of the previous arguments (8082) is taken by another test's manager as easily as the
	// metrics ports: every port is a free one, the flag itself is kept.
	replace := map[string]string{"registry-cache-listener-port": watcherPort,
		"gardener-kubeconfig-path": env.gardenFile, "gardener-project-name": env.Catalogue.Project,
		"metrics-bind-address": metrics, "health-probe-bind-address": probes, "converter-config-filepath": converter,
	}
	var args []string
	previous := 0
	for _, a := range doc.Args {
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if v, ok := replace[name]; ok {
			a = "--" + name + "=" + v
		}
		args = append(args, a)
		if !strings.HasPrefix(name, "zap-") && !oneOf(name, "leader-elect", "metrics-bind-address", "health-probe-bind-address", "gardener-kubeconfig-path") {
			previous++
		}
	}
	// The previous manager also took controller-runtime's --kubeconfig outside a cluster.
	args = append(args, "--kubeconfig="+env.kcpFile)
	previous++
	// The switch-over adds the previous metrics (docs/operations/migration.md), served as before over plain HTTP.
	args = append(args, "--legacy-metrics", "--metrics-secure=false")

	bin := filepath.Join(t.TempDir(), "manager")
	if out, err := exec.Command("go", "build", "-o", bin, filepath.Join(repoRoot, "operator", "cmd", "manager")).CombinedOutput(); err != nil {
		t.Fatalf("build the manager: %v\n%s", err, out)
	}
	var logs bytes.Buffer
	cmd := exec.Command(bin, args...)
	// No KIM_CONFIG_MAP: the previous Deployment names no ConfigMap of this operator.
	cmd.Env = append(os.Environ(), "POD_NAMESPACE="+kcpNamespace, "KUBECONFIG=/nonexistent")
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			t.Logf("manager stopped: %v", <-exited)
		}
	}()
	testenv.Eventually(t, 2*time.Minute, "the manager healthy", func() (bool, string) {
		select {
		case err := <-exited:
			t.Fatalf("the manager exited: %v\n%s", err, logs.String())
		default:
		}
		resp, err := http.Get("http://" + probes + "/healthz")
		if err != nil {
			return false, err.Error()
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})

	// --registry-cache-listener-port works: the Runtime Watcher's endpoint answers there, and refuses a caller
	// without a client certificate.
	// The manager starts its runnables after its health endpoint and caches: wait for it.
	testenv.Eventually(t, time.Minute, "the watcher listener serving", func() (bool, string) {
		resp, err := http.Post("http://127.0.0.1:"+watcherPort+"/v2/infrastructure-manager-registry-cache/event", "application/json",
			strings.NewReader(`{"watched":{"Namespace":"kyma-system","Name":"default"}}`))
		if err != nil {
			return false, fmt.Sprintf("--registry-cache-listener-port=%s: %v", watcherPort, err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusUnauthorized, "watcher event without a client certificate: " + resp.Status + ", want 401"
	})

	// It works: a GardenerCluster of a shoot gets its kubeconfig.
	id := "helm-args-0000-4000-8000-000000000001"
	s, err := env.NewShoot("c-helmargs", "aws")
	if err != nil {
		t.Fatal(err)
	}
	// The shoot names its runtime, as every system that creates shoots for runtimes writes it: a GardenerCluster
	// gets kubeconfigs only of its own runtime's shoot.
	s.Annotations = map[string]string{shootdomain.AnnotationRuntimeID: id}
	if err := env.GardenClient.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	gc := keb.GardenerCluster(id, s.Name)
	if err := env.KCPClient.Create(ctx, gc); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 2*time.Minute, "the kubeconfig of "+id, func() (bool, string) {
		sec := &corev1.Secret{}
		if err := env.KCPClient.Get(ctx, client.ObjectKey{Namespace: kcpNamespace, Name: "kubeconfig-" + id}, sec); err != nil {
			return false, err.Error()
		}
		p := usableKubeconfig(sec.Data["config"])
		return p == "", p
	})
	// The previous dashboards' series of this runtime, from the manager's metrics endpoint.
	testenv.Eventually(t, time.Minute, "the previous metrics of "+id, func() (bool, string) {
		missing, err := missingLegacySeries("http://"+metrics+"/metrics", id)
		if err != nil {
			return false, err.Error()
		}
		return len(missing) == 0, fmt.Sprintf("missing %v", missing)
	})
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			// The tail says why (the deprecation warnings at the start are the bulk of the log).
			t.Errorf("the manager exited with %v; the last lines it logged:\n%s", err, lastLines(logs.String(), 60))
		}
	case <-time.After(25 * time.Second):
		// Still running 25 s after SIGTERM, close to its 30 s grace period: SIGQUIT makes the Go runtime print every
		// goroutine, which names what does not stop.
		_ = cmd.Process.Signal(syscall.SIGQUIT)
		err := <-exited
		t.Fatalf("the manager did not stop within 25 s of SIGTERM (%v); its goroutines:\n%s", err, ownGoroutines(logs.String()))
	}
	if n := strings.Count(logs.String(), `"msg":"deprecated flag"`); n != previous {
		t.Errorf("%d deprecation warnings logged, want one per previous flag (%d):\n%s", n, previous, logs.String())
	}
	_ = env.KCPClient.Delete(ctx, gc)
}

// missingLegacySeries scrapes url and returns the previous infrastructure manager's metrics that have no series of
// runtimeID in the state a working runtime has (unexpected_stops_total: any series).
func missingLegacySeries(url, runtimeID string) ([]string, error) {
	resp, err := http.Get(url) //nolint:noctx // a test's own manager on localhost
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	want := map[string]string{
		legacymetrics.GardenerClusterState: `runtimeId="` + runtimeID + `"`,
		legacymetrics.KubeconfigExpiration: `runtimeId="` + runtimeID + `"`,
		legacymetrics.UnexpectedStops:      "",
	}
	var missing []string
	for name, label := range want {
		found := false
		for _, line := range strings.Split(string(body), "\n") {
			series := strings.HasPrefix(line, name+"{") || strings.HasPrefix(line, name+" ")
			ready := name != legacymetrics.GardenerClusterState || strings.Contains(line, `state="Ready"`)
			if series && strings.Contains(line, label) && ready {
				found = true
			}
		}
		if !found {
			missing = append(missing, name)
		}
	}
	return missing, nil
}

func oneOf(s string, in ...string) bool {
	for _, x := range in {
		if s == x {
			return true
		}
	}
	return false
}

func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// previousConverterConfig writes the previous manager's converter configuration of the test data, and the files it
// names, into a directory of the test, with the test garden's project; it returns the converter file's path.
func previousConverterConfig(t *testing.T, project string) string {
	t.Helper()
	dir, src := t.TempDir(), filepath.Join(repoRoot, "operator", "config", "testdata", "previous")
	raw, err := os.ReadFile(filepath.Join(src, "converter_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	c := doc["converter"].(map[string]any)
	c["gardener"].(map[string]any)["projectName"] = project
	for section, file := range map[string]string{"auditLogging": "audit-tenants.json", "maintenanceWindow": "maintenance-windows.json"} {
		data, err := os.ReadFile(filepath.Join(src, file))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, file)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		key := map[string]string{"auditLogging": "tenantConfigPath", "maintenanceWindow": "windowMapPath"}[section]
		c[section].(map[string]any)[key] = path
	}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "converter_config.json")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// ownGoroutines returns the goroutines of a Go runtime dump in s that run this project's, controller-runtime's or
// client-go's code (what can hold a shutdown), without the runtime's own.
func ownGoroutines(s string) string {
	var out []string
	for _, g := range strings.Split(s, "\n\n") {
		if strings.HasPrefix(g, "goroutine ") && (strings.Contains(g, "github.com/kyma-project/kim/") ||
			strings.Contains(g, "sigs.k8s.io/controller-runtime") || strings.Contains(g, "k8s.io/client-go")) {
			out = append(out, g)
		}
	}
	if len(out) == 0 {
		return lastLines(s, 200)
	}
	return strings.Join(out, "\n\n")
}
