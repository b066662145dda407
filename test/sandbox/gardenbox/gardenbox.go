// Package gardenbox starts the garden-in-a-box: a KCP (envtest kube-apiserver + etcd with the operator's
// CRDs), a separate garden (its own kube-apiserver + etcd with the real gardener-apiserver in-process,
// registered as aggregated API) seeded with a catalogue, a simulated gardenlet and, optionally, real
// runtime API servers behind the simulated shoots.
//
// It is the fixture of integration tests (one Env per test binary, typically in TestMain), the load-test
// bed and the engine of the sandbox command (`test/cmd/sandbox`).
package gardenbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kyma-project/kim/test/sandbox/catalogue"
	"github.com/kyma-project/kim/test/sandbox/gardenlet"
	"github.com/kyma-project/kim/test/sandbox/runtimeapi"
)

// EnvAssets is the environment variable naming the directory with the kube-apiserver and etcd binaries.
const EnvAssets = "KUBEBUILDER_ASSETS"

// ErrOncePerProcess is returned by a second Start in the same process: the in-process gardener-apiserver
// cannot be started twice. Share one Env per test binary (TestMain) and isolate tests by object names.
var ErrOncePerProcess = errors.New("gardenbox: the garden (in-process gardener-apiserver) can be started only once per process; start one Env in TestMain and share it")

var gardenStarted atomic.Bool

// Options configure the environment. The zero value is usable (no KCP CRDs, default catalogue,
// gardenlet with default timing, no runtime API servers).
type Options struct {
	// BinaryAssetsDirectory holds kube-apiserver and etcd; default $KUBEBUILDER_ASSETS.
	BinaryAssetsDirectory string
	// CRDDirectoryPaths are installed into the KCP (e.g. "config/crd/bases").
	CRDDirectoryPaths []string
	// KCPScheme is used for Env.KCPClient; default: client-go's scheme (add the operator's API types to use them).
	KCPScheme *runtime.Scheme
	// Catalogue is seeded into the garden; nil means catalogue.Default().
	Catalogue *catalogue.Catalogue
	// Gardenlet configures the simulated gardenlet (timing, global faults).
	Gardenlet gardenlet.Options
	// DisableGardenlet leaves shoots untouched (tests that drive shoot status themselves).
	DisableGardenlet bool
	// RuntimeAPIServers selects whether shoots get real API servers (none, one shared, one per shoot).
	RuntimeAPIServers runtimeapi.Mode
	// Logger receives the environment's and the gardenlet's logs; default: discard. Start also offers it to
	// controller-runtime's global logger (ctrl.SetLogger), which only takes effect if none was set before:
	// set yours before Start, or the in-process gardener-apiserver's would otherwise claim it.
	Logger logr.Logger
	// ControlPlaneOutput receives the raw output of all API servers (kube-apiserver, etcd, gardener-apiserver).
	// Nil discards it: Gardener's start-up is noisy and harmless.
	ControlPlaneOutput io.Writer
	// StartTimeout bounds the start of each control plane and of each runtime API server; default 60s (the machines
	// are small).
	StartTimeout time.Duration
	// GardenerAPIServerArgs are added to the in-process gardener-apiserver's flags (e.g.
	// --disable-admission-plugins for a harness that writes shoots faster than an admission plugin can look up).
	GardenerAPIServerArgs []string
}

// Env is a running garden-in-a-box.
type Env struct {
	// KCP is an admin config of the KCP kube-apiserver.
	KCP *rest.Config
	// Garden is an admin config of the garden kube-apiserver (Gardener APIs are served through it).
	Garden *rest.Config
	// KCPClient and GardenClient are ready-made clients (KCP: client-go scheme; garden: Gardener scheme).
	KCPClient, GardenClient client.Client
	// Catalogue is what the garden was seeded with.
	Catalogue catalogue.Catalogue
	// Gardenlet is the simulated gardenlet (nil when disabled).
	Gardenlet *gardenlet.Gardenlet
	// Runtimes backs shoots with API servers (mode from Options).
	Runtimes *runtimeapi.Pool
	// StartupTimes records how long each part took to start.
	StartupTimes StartupTimes

	kcp    *kcpPlane
	garden *gardenPlane
	cancel context.CancelFunc
	done   chan struct{}
	stop   sync.Once
	err    error
}

// StartupTimes are the measured start-up durations.
type StartupTimes struct {
	KCP, Garden, Catalogue, Total time.Duration
}

// Start starts KCP and garden in parallel, seeds the catalogue and starts the gardenlet. The returned Env
// must be stopped with Stop; on error everything started so far is stopped already.
func Start(ctx context.Context, opts Options) (_ *Env, retErr error) {
	begin := time.Now()
	// Gardener's in-process gardener-apiserver registers global feature gates and panics when started a second
	// time in the same process; fail cleanly instead of leaving the other control plane's processes orphaned.
	if !gardenStarted.CompareAndSwap(false, true) {
		return nil, ErrOncePerProcess
	}
	if opts.BinaryAssetsDirectory == "" {
		opts.BinaryAssetsDirectory = os.Getenv(EnvAssets)
	}
	if opts.BinaryAssetsDirectory == "" {
		return nil, fmt.Errorf("gardenbox: %s is not set; run `export %s=$(hack/envtest.sh)`", EnvAssets, EnvAssets)
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 60 * time.Second
	}
	cat := catalogue.Default()
	if opts.Catalogue != nil {
		cat = *opts.Catalogue
	}
	log := opts.Logger
	if log.GetSink() == nil {
		log = logr.Discard()
	}
	// The in-process gardener-apiserver installs its own logger as controller-runtime's global logger unless
	// one is set already; the first SetLogger wins, so this is a no-op when the caller set one before.
	ctrllog.SetLogger(log)
	env := &Env{Catalogue: cat, done: make(chan struct{})}
	defer func() {
		if retErr != nil {
			_ = env.Stop()
		}
	}()

	var wg sync.WaitGroup
	var kcpErr, gardenErr error
	wg.Add(2)
	go func() {
		defer wg.Done()
		t := time.Now()
		env.kcp, kcpErr = startKCP(opts)
		env.StartupTimes.KCP = time.Since(t)
	}()
	go func() {
		defer wg.Done()
		t := time.Now()
		env.garden, gardenErr = startGarden(opts)
		env.StartupTimes.Garden = time.Since(t)
	}()
	wg.Wait()
	if err := errors.Join(kcpErr, gardenErr); err != nil {
		return nil, err
	}
	env.KCP, env.KCPClient = env.kcp.config, env.kcp.client
	env.Garden, env.GardenClient = env.garden.config, env.garden.client
	log.V(1).Info("control planes started", "kcp", env.StartupTimes.KCP, "garden", env.StartupTimes.Garden)

	t := time.Now()
	if err := catalogue.Apply(ctx, env.GardenClient, cat); err != nil {
		return nil, fmt.Errorf("gardenbox: seed catalogue: %w", err)
	}
	env.StartupTimes.Catalogue = time.Since(t)

	env.Runtimes = runtimeapi.NewPool(runtimeapi.PoolOptions{
		Mode: opts.RuntimeAPIServers, BinaryAssetsDirectory: opts.BinaryAssetsDirectory, Out: opts.ControlPlaneOutput,
		StartTimeout: opts.StartTimeout, // a runtime's API server starts on the same small machine as the garden's
	})
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	env.cancel = cancel
	if opts.DisableGardenlet {
		close(env.done)
	} else {
		gl, err := gardenlet.New(fast(env.Garden), env.Runtimes, opts.Gardenlet, log.WithName("gardenlet"))
		if err != nil {
			close(env.done)
			return nil, fmt.Errorf("gardenbox: %w", err)
		}
		env.Gardenlet = gl
		started := make(chan error, 1)
		go func() {
			defer close(env.done)
			env.err = gl.Run(runCtx, started)
		}()
		if err := <-started; err != nil {
			return nil, fmt.Errorf("gardenbox: start gardenlet: %w", err)
		}
	}
	env.StartupTimes.Total = time.Since(begin)
	log.Info("garden-in-a-box started", "kcp", env.StartupTimes.KCP.Round(time.Millisecond),
		"garden", env.StartupTimes.Garden.Round(time.Millisecond), "total", env.StartupTimes.Total.Round(time.Millisecond))
	return env, nil
}

// Stop stops the gardenlet, all runtime API servers and both control planes and removes their temporary
// directories. It is safe to call more than once.
func (e *Env) Stop() error {
	var errs []error
	e.stop.Do(func() {
		if e.cancel != nil {
			e.cancel()
			<-e.done
			if e.err != nil && !errors.Is(e.err, context.Canceled) {
				errs = append(errs, fmt.Errorf("gardenlet: %w", e.err))
			}
		}
		if e.Runtimes != nil {
			errs = append(errs, e.Runtimes.Stop())
		}
		if e.garden != nil {
			errs = append(errs, e.garden.stop())
		}
		if e.kcp != nil {
			errs = append(errs, e.kcp.stop())
		}
	})
	return errors.Join(errs...)
}
