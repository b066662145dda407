package kube

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim/core/domain/runtimeconfig"
	"github.com/kyma-project/kim/core/ports"
)

// BootstrapSource implements ports.BootstrapSource with a KCP ConfigMap whose values are YAML manifests (several
// documents each; keys in lexical order, documents in file order) and an optional image pull Secret.
type BootstrapSource struct {
	// Reader reads both objects (a cache that watches them is what makes changes reach the runtimes).
	Reader     client.Reader
	ConfigMap  client.ObjectKey
	PullSecret *client.ObjectKey
	// Allowed is the landscape's list of kinds and namespaces the manifests may hold beyond the default
	// (runtime.bootstrap.allowedKinds); it travels with the set to the configurator, which judges every object.
	Allowed []runtimeconfig.BootstrapKind
}

var _ ports.BootstrapSource = (*BootstrapSource)(nil)

// Load implements ports.BootstrapSource.
func (s *BootstrapSource) Load(ctx context.Context) (*runtimeconfig.Bootstrap, error) {
	b := &runtimeconfig.Bootstrap{Source: s.ConfigMap.String(), Allowed: slices.Clone(s.Allowed)}
	cm := &corev1.ConfigMap{}
	err := s.Reader.Get(ctx, s.ConfigMap, cm)
	switch {
	case apierrors.IsNotFound(err):
		b.Problem = fmt.Sprintf("ConfigMap %s does not exist", s.ConfigMap)
		return b, nil
	case err != nil:
		return nil, fmt.Errorf("read bootstrap manifests %s: %w: %w", s.ConfigMap, ports.ErrTransient, err)
	}
	if b.Objects, err = ParseBootstrapManifests(cm.Data); err != nil {
		b.Problem = err.Error()
		return b, nil
	}
	if s.PullSecret != nil {
		secret := &corev1.Secret{}
		err := s.Reader.Get(ctx, *s.PullSecret, secret)
		switch {
		case apierrors.IsNotFound(err):
			b.Problem = fmt.Sprintf("pull secret %s does not exist", s.PullSecret)
		case err != nil:
			return nil, fmt.Errorf("read bootstrap pull secret %s: %w: %w", s.PullSecret, ports.ErrTransient, err)
		default:
			// Only a Secret made to be copied is: any other the configuration names (a kubeconfig, the Gardener
			// credential) would land in every runtime. The whole set waits for it, so nothing is applied half.
			if why := runtimeconfig.CheckPullSecret(s.PullSecret.String(), string(secret.Type), secret.Labels); why != "" {
				b.Objects, b.Problem, b.ProblemReason = nil, why, runtimeconfig.ReasonBootstrapPullSecretRefused
				return b, nil
			}
			b.PullSecret = &runtimeconfig.PullSecret{Name: secret.Name, Type: string(secret.Type), Data: maps.Clone(secret.Data)}
		}
	}
	return b, nil
}

// ParseBootstrapManifests reads every value of data as YAML documents. Each document must be one object with
// apiVersion, kind and metadata.name; empty documents are skipped. The error names the key and document.
func ParseBootstrapManifests(data map[string]string) ([]runtimeconfig.BootstrapObject, error) {
	var out []runtimeconfig.BootstrapObject
	for _, key := range slices.Sorted(maps.Keys(data)) {
		r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(data[key])))
		for n := 1; ; n++ {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("%s: document %d: %w", key, n, err)
			}
			if len(bytes.TrimSpace(doc)) == 0 {
				continue
			}
			raw, err := yaml.YAMLToJSON(doc)
			if err != nil {
				return nil, fmt.Errorf("%s: document %d is not YAML: %w", key, n, err)
			}
			if string(raw) == "null" {
				continue // only comments
			}
			var head struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
				Metadata   struct {
					Name      string `json:"name"`
					Namespace string `json:"namespace"`
				} `json:"metadata"`
			}
			if err := json.Unmarshal(raw, &head); err != nil {
				return nil, fmt.Errorf("%s: document %d is not an object: %w", key, n, err)
			}
			if head.APIVersion == "" || head.Kind == "" || head.Metadata.Name == "" || strings.HasSuffix(head.Kind, "List") {
				return nil, fmt.Errorf("%s: document %d needs apiVersion, kind and metadata.name and must be a single object", key, n)
			}
			out = append(out, runtimeconfig.BootstrapObject{APIVersion: head.APIVersion, Kind: head.Kind, Name: head.Metadata.Name,
				Namespace: head.Metadata.Namespace, JSON: raw})
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no manifests")
	}
	return out, nil
}

// NewBootstrapCache returns a cache that holds exactly the bootstrap ConfigMap and pull Secret of KCP; its informers
// announce changes. The caller starts it (e.g. mgr.Add).
func NewBootstrapCache(cfg *rest.Config, scheme *runtime.Scheme, cm client.ObjectKey, secret *client.ObjectKey) (cache.Cache, error) {
	byObject := map[client.Object]cache.ByObject{&corev1.ConfigMap{}: {
		Namespaces: map[string]cache.Config{cm.Namespace: {}}, Field: fields.OneTermEqualSelector("metadata.name", cm.Name)}}
	if secret != nil {
		byObject[&corev1.Secret{}] = cache.ByObject{
			Namespaces: map[string]cache.Config{secret.Namespace: {}}, Field: fields.OneTermEqualSelector("metadata.name", secret.Name)}
	}
	c, err := cache.New(cfg, cache.Options{Scheme: scheme, ByObject: byObject})
	if err != nil {
		return nil, fmt.Errorf("cache for bootstrap manifests %s: %w", cm, err)
	}
	return c, nil
}
