package harness

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/test/sandbox/gardenbox"
	"github.com/kyma-project/kim/test/testenv"
)

// World is garden-in-a-box prepared for a harness: KCP with the operator's CRDs and the watched namespace, the
// garden with its simulated gardenlet, and the API servers' host:port (the host label of client-go's metrics).
type World struct {
	Env                 *gardenbox.Env
	GardenHost, KCPHost string
	ShootNamespace      string
}

// StartWorld starts garden-in-a-box with o and creates kcpNamespace in the KCP. Stop it with w.Env.Stop.
func StartWorld(ctx context.Context, o testenv.GardenOptions, kcpNamespace string) (*World, error) {
	env, err := testenv.StartGarden(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("start garden-in-a-box: %w", err)
	}
	w := &World{Env: env, ShootNamespace: env.Catalogue.ProjectNamespace()}
	gu, err1 := url.Parse(env.Garden.Host)
	ku, err2 := url.Parse(env.KCP.Host)
	if err := errors.Join(err1, err2); err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("parse API server URLs: %w", err)
	}
	w.GardenHost, w.KCPHost = gu.Host, ku.Host
	if err := env.KCPClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: kcpNamespace}}); err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("create namespace %s: %w", kcpNamespace, err)
	}
	return w, nil
}

// The kubeconfigs the manager runs with (WriteKubeconfigs): they impersonate the identities that ship.
const (
	ManagerKCPKubeconfigFile    = "manager-kcp.kubeconfig"
	ManagerGardenKubeconfigFile = "manager-garden.kubeconfig"
)

// WriteKubeconfigs writes the admin kubeconfigs of env into dir (kcp.kubeconfig and garden.kubeconfig, for the
// harness and people) and the manager's (ManagerKCPKubeconfigFile, ManagerGardenKubeconfigFile): the same API servers
// as the operator's ServiceAccounts with exactly the bundle's RBAC in scope's namespaces and config/gardener in the
// project (testenv.GrantBundleRBAC).
func WriteKubeconfigs(ctx context.Context, env *gardenbox.Env, dir string, scope testenv.Scope) error {
	if err := env.WriteKubeconfigs(dir); err != nil {
		return err
	}
	id, err := testenv.GrantBundleRBAC(ctx, testenv.RepoRoot(), env.KCP, env.Garden, scope)
	if err != nil {
		return err
	}
	for file, cfg := range map[string]*rest.Config{ManagerKCPKubeconfigFile: id.KCP, ManagerGardenKubeconfigFile: id.Garden} {
		data, err := gardenbox.Kubeconfig(cfg, strings.TrimSuffix(file, ".kubeconfig"))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, file), data, 0o600); err != nil {
			return fmt.Errorf("write %s: %w", file, err)
		}
	}
	return nil
}

// CreateShoots creates the shoots named directly in the garden (not managed by the operator) with workers parallel
// clients and waits until the gardenlet has created all of them (lastOperation Create Succeeded, CA objects
// written, address advertised). Shoot names[i] is annotated as created for runtime runtimeIDs[i], as the previous
// infrastructure manager left its shoots: a GardenerCluster gets the kubeconfig only of its own runtime's shoot.
func (w *World) CreateShoots(ctx context.Context, names, runtimeIDs []string, workers int, timeout time.Duration) error {
	if len(runtimeIDs) != len(names) {
		return fmt.Errorf("create shoots: %d names but %d runtime IDs", len(names), len(runtimeIDs))
	}
	err := Parallel(ctx, len(names), workers, func(ctx context.Context, i int) error {
		s, err := w.Env.NewShoot(names[i], "aws")
		if err != nil {
			return err
		}
		s.Annotations = map[string]string{shoot.AnnotationRuntimeID: runtimeIDs[i]}
		if err := w.Env.GardenClient.Create(ctx, s); err != nil {
			return fmt.Errorf("create shoot %s: %w", s.Name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return testenv.Poll(ctx, timeout, 2*time.Second, "shoots ready", Reaches(func() (int, error) {
		n, err := w.SucceededShoots(ctx)
		return n, err
	}, len(names)), ProgressLog)
}

// SucceededShoots counts the shoots of the project whose last operation Succeeded and whose API server is
// advertised.
func (w *World) SucceededShoots(ctx context.Context) (int, error) {
	var list gardencorev1beta1.ShootList
	if err := w.Env.GardenClient.List(ctx, &list, client.InNamespace(w.ShootNamespace)); err != nil {
		return 0, fmt.Errorf("list shoots: %w", err)
	}
	ready := 0
	for _, s := range list.Items {
		if op := s.Status.LastOperation; op != nil && op.State == gardencorev1beta1.LastOperationStateSucceeded && len(s.Status.AdvertisedAddresses) > 0 {
			ready++
		}
	}
	return ready, nil
}

// WriteOperatorConfig writes the golden operator configuration (testenv.GoldenConfig) for the garden's project,
// with a one-hour deletion window, to dir/config.yaml and returns its path. The manager validates the whole
// configuration whatever controllers it runs.
func WriteOperatorConfig(dir, project string) (string, error) {
	return WriteOperatorConfigDeletion(dir, project, map[string]any{"defaultGracePeriod": "1h"})
}

// WriteOperatorConfigDeletion is WriteOperatorConfig with the given deletion section.
func WriteOperatorConfigDeletion(dir, project string, deletion map[string]any) (string, error) {
	raw, err := os.ReadFile(testenv.GoldenConfig())
	if err != nil {
		return "", err
	}
	doc := map[string]any{}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return "", fmt.Errorf("%s: %w", testenv.GoldenConfig(), err)
	}
	doc["gardener"] = map[string]any{"project": project}
	doc["deletion"] = deletion
	out, err := yaml.Marshal(doc)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "config.yaml")
	return path, os.WriteFile(path, out, 0o600)
}
