package fake

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"

	"github.com/kyma-project/kim/core/domain/deletion"
	"github.com/kyma-project/kim/core/ports"
)

// CredentialsBindings is an in-memory ports.CredentialsBindings: bindings with labels and a resourceVersion that
// moves with every change, so preconditions behave as on the API server. The shoots using a binding are those of
// Garden (their spec's credentials binding) plus those set with Use (shoots of others, e.g. KEB's double). Safe for
// concurrent use.
type CredentialsBindings struct {
	mu       sync.Mutex
	bindings map[string]*fakeBinding
	uses     map[string]string // shoot name -> binding, set by Use
	version  int
	// Garden, when set, contributes the bindings its shoots' specs name.
	Garden *Garden
	// Err, when set, is consulted first by every method (by name); a non-nil error is returned as is.
	Err func(method string) error
}

type fakeBinding struct {
	labels map[string]string
	rv     string
}

var _ ports.CredentialsBindings = (*CredentialsBindings)(nil)

// NewCredentialsBindings returns a store without bindings whose users include garden's shoots (garden may be nil).
func NewCredentialsBindings(garden *Garden) *CredentialsBindings {
	return &CredentialsBindings{bindings: map[string]*fakeBinding{}, uses: map[string]string{}, Garden: garden}
}

// Create stores a binding with labels (replacing one of the name).
func (c *CredentialsBindings) Create(name string, labels map[string]string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := &fakeBinding{labels: maps.Clone(labels)}
	if b.labels == nil {
		b.labels = map[string]string{}
	}
	c.touch(b)
	c.bindings[name] = b
}

// SetLabel sets (value != "") or removes a label, as another component would.
func (c *CredentialsBindings) SetLabel(name, key, value string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.bindings[name]
	if !ok {
		return
	}
	if value == "" {
		delete(b.labels, key)
	} else {
		b.labels[key] = value
	}
	c.touch(b)
}

// Labels returns the labels of a binding (nil when it does not exist).
func (c *CredentialsBindings) Labels(name string) map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b, ok := c.bindings[name]; ok {
		return maps.Clone(b.labels)
	}
	return nil
}

// Use records that shoot (not one of Garden's) names binding; binding "" forgets it.
func (c *CredentialsBindings) Use(shoot, binding string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if binding == "" {
		delete(c.uses, shoot)
		return
	}
	c.uses[shoot] = binding
}

func (c *CredentialsBindings) touch(b *fakeBinding) {
	c.version++
	b.rv = strconv.Itoa(c.version)
}

func (c *CredentialsBindings) fail(method string) error {
	if c.Err != nil {
		return c.Err(method)
	}
	return nil
}

// Get implements ports.CredentialsBindings.
func (c *CredentialsBindings) Get(_ context.Context, name string) (deletion.Binding, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.fail("Get"); err != nil {
		return deletion.Binding{}, err
	}
	b, ok := c.bindings[name]
	if !ok {
		return deletion.Binding{Name: name}, nil
	}
	return BindingOf(name, b.labels, b.rv), nil
}

// BindingOf maps a binding's labels as KEB reads them (shared, internal, dirty equal to "true").
func BindingOf(name string, labels map[string]string, rv string) deletion.Binding {
	_, dirtyLabelled := labels["dirty"]
	return deletion.Binding{Name: name, Exists: true, Shared: labels["shared"] == "true", Internal: labels["internal"] == "true",
		Dirty: labels["dirty"] == "true", DirtyLabelled: dirtyLabelled, ResourceVersion: rv}
}

func (c *CredentialsBindings) write(method, name, rv string, f func(map[string]string)) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.fail(method); err != nil {
		return err
	}
	b, ok := c.bindings[name]
	if !ok {
		return fmt.Errorf("%s credentials binding %s: not found: %w", method, name, ports.ErrConflict)
	}
	if rv != "" && rv != b.rv {
		return fmt.Errorf("%s credentials binding %s: resourceVersion %s, observed %s: %w", method, name, b.rv, rv, ports.ErrConflict)
	}
	before := maps.Clone(b.labels)
	f(b.labels)
	if !maps.Equal(before, b.labels) {
		c.touch(b)
	}
	return nil
}

// SetDirty implements ports.CredentialsBindings.
func (c *CredentialsBindings) SetDirty(_ context.Context, name, resourceVersion string) error {
	return c.write("SetDirty", name, resourceVersion, func(l map[string]string) { l["dirty"] = "true" })
}

// RemoveDirty implements ports.CredentialsBindings.
func (c *CredentialsBindings) RemoveDirty(_ context.Context, name, resourceVersion string) error {
	return c.write("RemoveDirty", name, resourceVersion, func(l map[string]string) { delete(l, "dirty") })
}

// UsedBy implements ports.CredentialsBindings.
func (c *CredentialsBindings) UsedBy(_ context.Context, name, except string) ([]string, error) {
	c.mu.Lock()
	uses := maps.Clone(c.uses)
	err := c.fail("UsedBy")
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if c.Garden != nil {
		maps.Copy(uses, c.Garden.bindingUses())
	}
	var out []string
	for shoot, b := range uses {
		if b == name && shoot != except {
			out = append(out, shoot)
		}
	}
	slices.Sort(out)
	return out, nil
}
