package serviceaccountkubeconfig_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/app"
	"github.com/kyma-project/kim/operator/controllers/gardenercluster"
	"github.com/kyma-project/kim/operator/controllers/serviceaccountkubeconfig"
	"github.com/kyma-project/kim/operator/sandbox/gardenbox"
	"github.com/kyma-project/kim/operator/sandbox/runtimeapi"
)

const kcpNamespace = "kcp-system"

// logSink keeps the operator's log output, to prove that no token ever reaches it.
type logSink struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logSink) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

var (
	logs   = &logSink{}
	shared struct {
		once sync.Once
		env  *gardenbox.Env
		err  error
	}
)

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.env != nil {
		_ = shared.env.Stop()
	}
	os.Exit(code)
}

// world is garden-in-a-box with one runtime API server per shoot, the operator's view and a clock the test moves.
type world struct {
	env   *gardenbox.Env
	kcp   client.Client // uncached: assertions see the API server
	clock *offsetClock
}

func newWorld(t *testing.T) *world {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs garden-in-a-box (KUBEBUILDER_ASSETS)")
	}
	shared.once.Do(func() {
		ctrl.SetLogger(zap.New(zap.WriteTo(logs)))
		scheme, err := app.NewScheme()
		if err != nil {
			shared.err = err
			return
		}
		shared.env, shared.err = gardenbox.Start(context.Background(), gardenbox.Options{
			CRDDirectoryPaths: []string{filepath.Join("..", "..", "..", "config", "crd", "bases")},
			KCPScheme:         scheme, RuntimeAPIServers: runtimeapi.ModePerShoot, StartTimeout: 3 * time.Minute,
		})
		if shared.err == nil {
			shared.err = shared.env.KCPClient.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: kcpNamespace}})
		}
	})
	if shared.err != nil {
		t.Fatalf("start garden-in-a-box: %v", shared.err)
	}
	if path := os.Getenv("KIM_E2E_LOG"); path != "" {
		t.Cleanup(func() { _ = os.WriteFile(path, []byte(logs.String()), 0o600) })
	}
	return &world{env: shared.env, kcp: shared.env.KCPClient, clock: &offsetClock{}}
}

// offsetClock is the wall clock plus an offset the test moves: the operator decides on it, while the runtime's
// tokens expire in real time.
type offsetClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *offsetClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *offsetClock) Step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

// startOperator runs the manager with the kubeconfig controllers (admin kubeconfigs through Gardener, and the
// ServiceAccountKubeconfig controller on the test's clock) until the returned stop is called. The caller stops it
// (a restart outlives the subtest that starts it).
func (w *world) startOperator(t *testing.T, cleanupTimeout time.Duration) (stop func() error) {
	t.Helper()
	opts := app.DefaultOptions()
	opts.MetricsAddr, opts.ProbeAddr, opts.LeaderElection = "0", "0", false
	opts.GardenerProject = w.env.Catalogue.Project
	opts.KubeconfigValidity = time.Hour
	mgr, err := app.NewManager(w.env.KCP, w.env.Garden, opts, gardenercluster.Controller{SkipNameValidation: true},
		serviceaccountkubeconfig.Controller{Clock: w.clock, CleanupTimeout: cleanupTimeout, SkipNameValidation: true})
	if err != nil {
		t.Fatalf("new manager: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	var once sync.Once
	var stopErr error
	return func() error {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
				stopErr = fmt.Errorf("manager: %w", err)
			}
		})
		return stopErr
	}
}

// addRuntime creates a shoot backed by its own runtime API server and the GardenerCluster KEB would create for it,
// and waits for the admin kubeconfig Secret.
func (w *world) addRuntime(t *testing.T, runtimeID, shootName string) {
	t.Helper()
	ctx := context.Background()
	s, err := w.env.NewShoot(shootName, "aws")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.env.GardenClient.Create(ctx, s); err != nil {
		t.Fatalf("create shoot: %v", err)
	}
	gc := &imv1.GardenerCluster{ObjectMeta: metav1.ObjectMeta{Name: runtimeID, Namespace: kcpNamespace,
		Labels: map[string]string{imv1.LabelRuntimeID: runtimeID, imv1.LabelShootName: shootName}},
		Spec: imv1.GardenerClusterSpec{Shoot: imv1.Shoot{Name: shootName},
			Kubeconfig: imv1.Kubeconfig{Secret: imv1.Secret{Name: "kubeconfig-" + runtimeID, Namespace: kcpNamespace, Key: "config"}}}}
	if err := w.kcp.Create(ctx, gc); err != nil {
		t.Fatalf("create GardenerCluster: %v", err)
	}
	eventually(t, 4*time.Minute, "the admin kubeconfig of "+runtimeID, func() (bool, string) {
		var sh gardencorev1beta1.Shoot
		_ = w.env.GardenClient.Get(ctx, client.ObjectKeyFromObject(s), &sh)
		var sec corev1.Secret
		err := w.kcp.Get(ctx, types.NamespacedName{Namespace: kcpNamespace, Name: "kubeconfig-" + runtimeID}, &sec)
		return err == nil && len(sec.Data["config"]) > 0, fmt.Sprintf("shoot %v, secret: %v", sh.Status.LastOperation, err)
	})
}

// shootKey names a shoot in the runtime API server pool.
func (w *world) shootKey(shootName string) string {
	return w.env.Catalogue.ProjectNamespace() + "/" + shootName
}

// runtimeAdmin is an admin client of the shoot's runtime API server (from the sandbox, not the operator).
func (w *world) runtimeAdmin(t *testing.T, shootName string) kubernetes.Interface {
	t.Helper()
	cfg, err := w.env.Runtimes.AdminConfig(w.shootKey(shootName))
	if err != nil {
		t.Fatal(err)
	}
	return kubernetes.NewForConfigOrDie(cfg)
}

// tokenRequests is the runtime API server's own count of TokenRequests it served, and of all resource requests.
func (w *world) tokenRequests(t *testing.T, shootName string) (tokens, resources int) {
	t.Helper()
	raw, err := w.runtimeAdmin(t, shootName).CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("runtime API server metrics: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_request_total{") || strings.Contains(line, `resource=""`) {
			continue
		}
		n, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		resources += int(n)
		if strings.Contains(line, `resource="serviceaccounts"`) && strings.Contains(line, `subresource="token"`) && strings.Contains(line, `verb="POST"`) {
			tokens += int(n)
		}
	}
	return tokens, resources
}

// get reads a ServiceAccountKubeconfig (nil when it does not exist).
func (w *world) get(t *testing.T, name string) *imv1.ServiceAccountKubeconfig {
	t.Helper()
	s := &imv1.ServiceAccountKubeconfig{}
	if err := w.kcp.Get(context.Background(), types.NamespacedName{Namespace: kcpNamespace, Name: name}, s); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return nil
		}
		t.Fatal(err)
	}
	return s
}

func ready(s *imv1.ServiceAccountKubeconfig) (bool, string) {
	if s == nil {
		return false, "not found"
	}
	for _, c := range s.Status.Conditions {
		if c.Type == imv1.ConditionReady {
			return c.Status == metav1.ConditionTrue && s.Status.ObservedGeneration == s.Generation,
				fmt.Sprintf("%s (generation %d, observed %d) %s: %s", s.Status.State, s.Generation, s.Status.ObservedGeneration, c.Reason, c.Message)
		}
	}
	return false, string(s.Status.State)
}

func readyReason(s *imv1.ServiceAccountKubeconfig) string {
	for _, c := range s.Status.Conditions {
		if c.Type == imv1.ConditionReady {
			return c.Reason
		}
	}
	return ""
}

// secret reads a kubeconfig Secret (nil when it does not exist).
func (w *world) secret(t *testing.T, name string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	if err := w.kcp.Get(context.Background(), types.NamespacedName{Namespace: kcpNamespace, Name: name}, s); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return nil
		}
		t.Fatal(err)
	}
	return s
}

// consumer is a client of the runtime built from a kubeconfig, as lifecycle-manager or KEB would build it.
func consumer(kc []byte) (kubernetes.Interface, error) {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kc)
	if err != nil {
		return nil, err
	}
	cfg.Timeout = 10 * time.Second
	return kubernetes.NewForConfig(cfg)
}

func issuedAt(s *corev1.Secret) string { return s.Annotations[kubeconfig.AnnotationLastSync] }

// eventually polls cond every 100 ms until it holds, failing after timeout with cond's last description.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for {
		ok, desc := cond()
		if ok {
			return
		}
		last = desc
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; last seen: %s", timeout, what, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// hangingServer accepts connections and never answers: a runtime API server that hangs.
func hangingServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			_ = c.Close()
		}
	})
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	return "https://" + l.Addr().String()
}
