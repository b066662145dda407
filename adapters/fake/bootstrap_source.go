package fake

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/kyma-project/kim/core/domain/runtimeconfig"
	"github.com/kyma-project/kim/core/ports"
)

// BootstrapSource is an in-memory ports.BootstrapSource: the landscape's bootstrap manifests and pull secret as a
// test puts them into the KCP, judged as the real source judges them (a missing or unusable part is a Problem of the
// set, a pull secret not made to be copied refuses the whole set).
type BootstrapSource struct {
	mu         sync.Mutex
	source     string
	pullSecret string
	allowed    []runtimeconfig.BootstrapKind
	// objects are the manifests; nil with unusable or without manifests.
	objects  []runtimeconfig.BootstrapObject
	present  bool
	unusable string
	secret   *pullSecretObject
	err      error
}

// pullSecretObject is the pull secret as the KCP holds it.
type pullSecretObject struct {
	typ    string
	labels map[string]string
	data   map[string][]byte
}

var _ ports.BootstrapSource = (*BootstrapSource)(nil)

// NewBootstrapSource returns a source of the manifests named source (namespace/name of their ConfigMap), configured
// with the pull secret pullSecret (namespace/name; "" none) and the allowed kinds; the KCP holds neither yet.
func NewBootstrapSource(source, pullSecret string, allowed []runtimeconfig.BootstrapKind) *BootstrapSource {
	return &BootstrapSource{source: source, pullSecret: pullSecret, allowed: slices.Clone(allowed)}
}

// SetManifests makes the manifests exactly objects, in this order.
func (s *BootstrapSource) SetManifests(objects []runtimeconfig.BootstrapObject) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objects, s.present, s.unusable = cloneObjects(objects), true, ""
}

// SetUnusableManifests makes the manifests something that is no list of objects; why is the set's Problem.
func (s *BootstrapSource) SetUnusableManifests(why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objects, s.present, s.unusable = nil, true, why
}

// RemoveManifests removes the manifests.
func (s *BootstrapSource) RemoveManifests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objects, s.present, s.unusable = nil, false, ""
}

// SetPullSecret makes the configured pull secret a Secret of type typ with labels and data.
func (s *BootstrapSource) SetPullSecret(typ string, labels map[string]string, data map[string][]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.secret = &pullSecretObject{typ: typ, labels: maps.Clone(labels), data: cloneData(data)}
}

// FailReads makes every later Load fail with err (nil: reads succeed again).
func (s *BootstrapSource) FailReads(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = err
}

// Load implements ports.BootstrapSource.
func (s *BootstrapSource) Load(context.Context) (*runtimeconfig.Bootstrap, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, fmt.Errorf("read bootstrap manifests %s: %w: %w", s.source, ports.ErrTransient, s.err)
	}
	b := &runtimeconfig.Bootstrap{Source: s.source, Allowed: slices.Clone(s.allowed)}
	switch {
	case !s.present:
		b.Problem = fmt.Sprintf("ConfigMap %s does not exist", s.source)
		return b, nil
	case s.unusable != "":
		b.Problem = s.unusable
		return b, nil
	case len(s.objects) == 0:
		b.Problem = "no manifests"
		return b, nil
	}
	b.Objects = cloneObjects(s.objects)
	if s.pullSecret == "" {
		return b, nil
	}
	if s.secret == nil {
		b.Problem = fmt.Sprintf("pull secret %s does not exist", s.pullSecret)
		return b, nil
	}
	if why := runtimeconfig.CheckPullSecret(s.pullSecret, s.secret.typ, s.secret.labels); why != "" {
		b.Objects, b.Problem, b.ProblemReason = nil, why, runtimeconfig.ReasonBootstrapPullSecretRefused
		return b, nil
	}
	// The copy keeps the Secret's name; the namespace is the runtime's.
	_, name, _ := strings.Cut(s.pullSecret, "/")
	b.PullSecret = &runtimeconfig.PullSecret{Name: name, Type: s.secret.typ, Data: cloneData(s.secret.data)}
	return b, nil
}

func cloneObjects(in []runtimeconfig.BootstrapObject) []runtimeconfig.BootstrapObject {
	out := slices.Clone(in)
	for i := range out {
		out[i].JSON = slices.Clone(out[i].JSON)
	}
	return out
}
