package gardenbox

import (
	"errors"
	"fmt"
	"io"

	gardenerenvtest "github.com/gardener/gardener/test/envtest"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kyma-project/kim/test/sandbox/gardenlet"
)

type kcpPlane struct {
	env    *envtest.Environment
	config *rest.Config
	client client.Client
}

func startKCP(opts Options) (*kcpPlane, error) {
	env := &envtest.Environment{
		BinaryAssetsDirectory:    opts.BinaryAssetsDirectory,
		CRDDirectoryPaths:        opts.CRDDirectoryPaths,
		ErrorIfCRDPathMissing:    len(opts.CRDDirectoryPaths) > 0,
		ControlPlaneStartTimeout: opts.StartTimeout,
		ControlPlaneStopTimeout:  opts.StartTimeout,
	}
	attachOutput(&env.ControlPlane, opts)
	cfg, err := env.Start()
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("gardenbox: start KCP: %w", err)
	}
	scheme := opts.KCPScheme
	if scheme == nil {
		scheme = clientgoscheme.Scheme
	}
	c, err := client.New(fast(cfg), client.Options{Scheme: scheme})
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("gardenbox: KCP client: %w", err)
	}
	return &kcpPlane{env: env, config: cfg, client: c}, nil
}

func (p *kcpPlane) stop() error {
	if err := p.env.Stop(); err != nil {
		return fmt.Errorf("stop KCP: %w", err)
	}
	return nil
}

type gardenPlane struct {
	env    *gardenerenvtest.GardenerTestEnvironment
	config *rest.Config
	client client.Client
	quiet  io.Closer
}

func startGarden(opts Options) (*gardenPlane, error) {
	env := &gardenerenvtest.GardenerTestEnvironment{
		Environment: &envtest.Environment{
			BinaryAssetsDirectory:    opts.BinaryAssetsDirectory,
			ControlPlaneStartTimeout: opts.StartTimeout,
			ControlPlaneStopTimeout:  opts.StartTimeout,
		},
		GardenerAPIServer: &gardenerenvtest.GardenerAPIServer{
			StartTimeout: opts.StartTimeout,
			StopTimeout:  opts.StartTimeout,
			Out:          opts.ControlPlaneOutput,
			Err:          opts.ControlPlaneOutput,
			Args:         opts.GardenerAPIServerArgs,
		},
	}
	attachOutput(&env.ControlPlane, opts)
	var cfg *rest.Config
	quiet, err := captureStderr(opts.ControlPlaneOutput, func() (err error) {
		cfg, err = env.Start()
		return err
	})
	if err != nil {
		err = errors.Join(fmt.Errorf("gardenbox: start garden: %w", err), env.Stop())
		if quiet != nil {
			_ = quiet.Close()
		}
		return nil, err
	}
	p := &gardenPlane{env: env, config: cfg, quiet: quiet}
	if p.client, err = client.New(fast(cfg), client.Options{Scheme: gardenlet.Scheme()}); err != nil {
		return nil, errors.Join(fmt.Errorf("gardenbox: garden client: %w", err), p.stop())
	}
	return p, nil
}

func (p *gardenPlane) stop() error {
	err := p.env.Stop()
	_ = p.quiet.Close()
	if err != nil {
		return fmt.Errorf("stop garden: %w", err)
	}
	return nil
}

func attachOutput(cp *envtest.ControlPlane, opts Options) {
	if opts.ControlPlaneOutput == nil {
		return
	}
	cp.GetAPIServer().Out, cp.GetAPIServer().Err = opts.ControlPlaneOutput, opts.ControlPlaneOutput
	if cp.Etcd == nil {
		cp.Etcd = &envtest.Etcd{}
	}
	cp.Etcd.Out, cp.Etcd.Err = opts.ControlPlaneOutput, opts.ControlPlaneOutput
}

// fast returns a copy of cfg without client-side throttling worth mentioning: the servers are local and
// the default (5 QPS) makes seeding the catalogue take seconds.
func fast(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst = 500, 1000
	return c
}
