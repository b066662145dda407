package serviceaccountkubeconfig_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/domain/shoot"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/app"
	"github.com/kyma-project/kim/operator/config"
	"github.com/kyma-project/kim/operator/controllers/gardenercluster"
	"github.com/kyma-project/kim/operator/controllers/serviceaccountkubeconfig"
	"github.com/kyma-project/kim/test/sandbox/gardenbox"
	"github.com/kyma-project/kim/test/sandbox/runtimeapi"
	"github.com/kyma-project/kim/test/testenv"
)

const kcpNamespace = "kcp-system"

// One garden-in-a-box per test binary with one runtime API server per shoot (the in-process gardener-apiserver
// cannot be started twice); the tests use distinct runtime IDs and shoots.
func TestMain(m *testing.M) { testenv.Main(m) }

// world is garden-in-a-box with one runtime API server per shoot, the operator's logs and a clock the test moves.
type world struct {
	env   *gardenbox.Env
	kcp   client.Client // uncached: assertions see the API server
	logs  *testenv.Logs
	clock *offsetClock
	// admin is the operator that keeps the runtimes' admin kubeconfigs, on the wall clock.
	admin *testenv.Operator
}

func newWorld(t *testing.T) *world {
	t.Helper()
	env := testenv.Garden(t, testenv.GardenOptions{RuntimeAPIServers: runtimeapi.ModePerShoot})
	err := env.KCPClient.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: kcpNamespace}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	w := &world{env: env, kcp: env.KCPClient, logs: testenv.CaptureLogs(), clock: &offsetClock{}}
	// Admin kubeconfigs are issued and rotated on the wall clock (Gardener's certificates expire in real time); only
	// the ServiceAccountKubeconfig controller runs on the test's clock (startOperator).
	opts := w.options(0)
	opts.Controllers = []string{gardenercluster.Name}
	w.admin = testenv.RunOperator(t, env.KCP, env.Garden, opts)
	return w
}

// options are the operator's options for the tests: admin kubeconfigs valid 1 h, and the cleanup timeout of
// ServiceAccountKubeconfigs (0: the default).
func (w *world) options(cleanupTimeout time.Duration) app.Options {
	opts := testenv.Options(w.env.Catalogue.Project)
	opts.KubeconfigValidity = time.Hour
	opts.Config = &config.OperatorConfig{APIVersion: config.APIVersion, Kind: config.Kind}
	opts.Config.Default()
	opts.Config.ServiceAccountKubeconfigs.CleanupTimeout = config.Set(cleanupTimeout)
	return opts
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

// Reset puts the clock back on the wall clock, whatever the steps before added up to.
func (c *offsetClock) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset = 0
}

// startOperator runs the operator with only the ServiceAccountKubeconfig controller, on the test's clock. The caller
// stops it (a restart outlives the subtest that starts it).
func (w *world) startOperator(t *testing.T, cleanupTimeout time.Duration) *testenv.Operator {
	t.Helper()
	opts := w.options(cleanupTimeout)
	opts.Controllers = []string{serviceaccountkubeconfig.Name}
	o, err := testenv.StartOperator(context.Background(), w.env.KCP, w.env.Garden, opts, app.WithClock(w.clock))
	if err != nil {
		t.Fatalf("start operator: %v", err)
	}
	return o
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
	s.Annotations = map[string]string{shoot.AnnotationRuntimeID: runtimeID} // as the operator writes it: the GardenerCluster checks it
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
	testenv.Eventually(t, 4*time.Minute, "the admin kubeconfig of "+runtimeID, func() (bool, string) {
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
