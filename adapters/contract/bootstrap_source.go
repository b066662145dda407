package contract

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kyma-project/kim/core/domain/runtimeconfig"
	"github.com/kyma-project/kim/core/ports"
)

// BootstrapSourceOptions configure the source of a fixture.
type BootstrapSourceOptions struct {
	// PullSecret: the source is configured with a pull secret (runtime.bootstrap.pullSecret), which the fixture
	// starts without.
	PullSecret bool
}

// BootstrapSourceFixture is a KCP holding the landscape's bootstrap manifests and pull secret as an operator puts
// them there, and the source reading them. It starts without manifests.
type BootstrapSourceFixture struct {
	Source ports.BootstrapSource
	// Allowed are the kinds the source was configured to allow beyond the default (runtime.bootstrap.allowedKinds).
	Allowed []runtimeconfig.BootstrapKind
	// PutManifests makes the manifests exactly objects, in this order.
	PutManifests func(t *testing.T, objects []runtimeconfig.BootstrapObject)
	// PutUnusableManifests makes the manifests something that is no list of objects (a document without name).
	PutUnusableManifests func(t *testing.T)
	// RemoveManifests removes the manifests.
	RemoveManifests func(t *testing.T)
	// PutPullSecret makes the configured pull secret a Secret of type typ with labels and data.
	PutPullSecret func(t *testing.T, typ string, labels map[string]string, data map[string][]byte)
	// FailReads makes every later read of the source fail (the KCP does not answer).
	FailReads func(t *testing.T)
}

// bootstrapObjects are two manifests as a landscape ships them: a cluster-scoped object and a namespaced one holding
// value.
func bootstrapObjects(value string) []runtimeconfig.BootstrapObject {
	return []runtimeconfig.BootstrapObject{
		bootstrapObject("v1", "Namespace", "", "kyma-bootstrap", `"spec":{"finalizers":["kubernetes"]}`),
		bootstrapObject("v1", "ConfigMap", "kyma-bootstrap", "settings", `"data":{"value":"`+value+`"}`),
	}
}

const dockerConfigJSON = "kubernetes.io/dockerconfigjson"

// RunBootstrapSourceContract runs the BootstrapSource contract against fixtures made by newFixture. A set the
// operator cannot use is a Problem of the set (reported on every runtime, nothing applied), never an error: an
// error means the source could not read and is retried.
func RunBootstrapSourceContract(t *testing.T, newFixture func(t *testing.T, o BootstrapSourceOptions) BootstrapSourceFixture) {
	optIn := map[string]string{runtimeconfig.LabelBootstrapPullSecret: "true"}
	pullData := map[string][]byte{".dockerconfigjson": []byte(`{"auths":{}}`)}
	t.Run("the manifests are the set's objects in their order, with the allowed kinds", func(t *testing.T) {
		f := newFixture(t, BootstrapSourceOptions{})
		want := bootstrapObjects("one")
		f.PutManifests(t, want)
		eventually(t, "the set holds the manifests", func(c *assert.CollectT) {
			b := loadSet(t.Context(), c, f)
			require.Empty(c, b.Problem)
			checkManifests(c, want, b.Objects)
			require.Equal(c, f.Allowed, b.Allowed)
			require.NotEmpty(c, b.Source, "the set names where it comes from")
			require.Nil(c, b.PullSecret, "no pull secret is configured")
		})
	})
	t.Run("missing manifests are a problem of the set, not an error", func(t *testing.T) {
		f := newFixture(t, BootstrapSourceOptions{})
		b, err := f.Source.Load(t.Context())
		require.NoError(t, err)
		requireProblem(t, b, runtimeconfig.ReasonBootstrapManifestsInvalid)
	})
	t.Run("unusable manifests are a problem of the set, not an error", func(t *testing.T) {
		f := newFixture(t, BootstrapSourceOptions{})
		f.PutUnusableManifests(t)
		eventually(t, "the set reports the manifests unusable", func(c *assert.CollectT) {
			requireProblem(c, loadSet(t.Context(), c, f), runtimeconfig.ReasonBootstrapManifestsInvalid)
		})
	})
	t.Run("a change of the manifests reaches the set", func(t *testing.T) {
		f := newFixture(t, BootstrapSourceOptions{})
		f.PutManifests(t, bootstrapObjects("one"))
		eventually(t, "the first manifests", func(c *assert.CollectT) {
			checkManifests(c, bootstrapObjects("one"), loadSet(t.Context(), c, f).Objects)
		})
		f.PutManifests(t, bootstrapObjects("two"))
		eventually(t, "the changed manifests", func(c *assert.CollectT) {
			checkManifests(c, bootstrapObjects("two"), loadSet(t.Context(), c, f).Objects)
		})
		f.RemoveManifests(t)
		eventually(t, "no manifests", func(c *assert.CollectT) {
			requireProblem(c, loadSet(t.Context(), c, f), runtimeconfig.ReasonBootstrapManifestsInvalid)
		})
	})
	t.Run("the pull secret made to be copied comes with the set", func(t *testing.T) {
		f := newFixture(t, BootstrapSourceOptions{PullSecret: true})
		f.PutManifests(t, bootstrapObjects("one"))
		f.PutPullSecret(t, dockerConfigJSON, optIn, pullData)
		eventually(t, "the set holds the pull secret", func(c *assert.CollectT) {
			b := loadSet(t.Context(), c, f)
			require.Empty(c, b.Problem)
			require.NotNil(c, b.PullSecret)
			require.NotEmpty(c, b.PullSecret.Name)
			require.Equal(c, dockerConfigJSON, b.PullSecret.Type)
			require.Equal(c, pullData, b.PullSecret.Data)
			checkManifests(c, bootstrapObjects("one"), b.Objects)
		})
	})
	t.Run("a missing pull secret is a problem of the set, not an error", func(t *testing.T) {
		f := newFixture(t, BootstrapSourceOptions{PullSecret: true})
		f.PutManifests(t, bootstrapObjects("one"))
		eventually(t, "the set reports the pull secret missing", func(c *assert.CollectT) {
			b := loadSet(t.Context(), c, f)
			require.NotEmpty(c, b.Problem)
			require.Nil(c, b.PullSecret)
		})
	})
	for _, secret := range []struct {
		name   string
		typ    string
		labels map[string]string
	}{
		{name: "a Secret of another type, labelled", typ: "Opaque", labels: optIn},
		{name: "a docker config without the opt-in label", typ: dockerConfigJSON},
		{name: "a docker config whose opt-in label is not true", typ: dockerConfigJSON,
			labels: map[string]string{runtimeconfig.LabelBootstrapPullSecret: "false"}},
	} {
		t.Run("the whole set is refused for "+secret.name, func(t *testing.T) {
			f := newFixture(t, BootstrapSourceOptions{PullSecret: true})
			f.PutManifests(t, bootstrapObjects("one"))
			f.PutPullSecret(t, secret.typ, secret.labels, pullData)
			eventually(t, "the set is refused", func(c *assert.CollectT) {
				b := loadSet(t.Context(), c, f)
				requireProblem(c, b, runtimeconfig.ReasonBootstrapPullSecretRefused)
				require.Nil(c, b.PullSecret, "a refused Secret never travels")
			})
		})
	}
	t.Run("a loaded set is the caller's", func(t *testing.T) {
		f := newFixture(t, BootstrapSourceOptions{PullSecret: true})
		f.PutManifests(t, bootstrapObjects("one"))
		f.PutPullSecret(t, dockerConfigJSON, optIn, pullData)
		eventually(t, "the set is complete", func(c *assert.CollectT) { require.NotNil(c, loadSet(t.Context(), c, f).PullSecret) })
		b, err := f.Source.Load(t.Context())
		require.NoError(t, err)
		b.Objects[0].JSON[0] = 'x'
		b.Objects = append(b.Objects[:0], b.Objects[1])
		b.PullSecret.Data[".dockerconfigjson"][0] = 'x'
		b.PullSecret.Data["added"] = nil
		b.Allowed = append(b.Allowed, runtimeconfig.BootstrapKind{Kind: "Added"})
		again, err := f.Source.Load(t.Context())
		require.NoError(t, err)
		checkManifests(t, bootstrapObjects("one"), again.Objects)
		require.Equal(t, pullData, again.PullSecret.Data)
		require.Equal(t, f.Allowed, again.Allowed)
	})
	t.Run("a failed read is transient, not a problem of the set", func(t *testing.T) {
		f := newFixture(t, BootstrapSourceOptions{})
		f.PutManifests(t, bootstrapObjects("one"))
		eventually(t, "the set holds the manifests", func(c *assert.CollectT) { require.Len(c, loadSet(t.Context(), c, f).Objects, 2) })
		f.FailReads(t)
		_, err := f.Source.Load(t.Context())
		if !errors.Is(err, ports.ErrTransient) {
			t.Errorf("Load when reads fail: %v, want an error wrapping ErrTransient", err)
		}
	})
}

// loadSet loads the set; a read error fails c.
func loadSet(ctx context.Context, c require.TestingT, f BootstrapSourceFixture) *runtimeconfig.Bootstrap {
	b, err := f.Source.Load(ctx)
	require.NoError(c, err)
	require.NotNil(c, b)
	return b
}

// requireProblem checks that b is unusable with reason and carries nothing to apply.
func requireProblem(c require.TestingT, b *runtimeconfig.Bootstrap, reason runtimeconfig.Reason) {
	require.NotEmpty(c, b.Problem)
	require.Empty(c, b.Objects, "an unusable set carries no objects")
	o := b.ProblemOutcome()
	require.Equal(c, reason, o.Reason)
	require.False(c, o.Done)
}

// checkManifests compares objects by what identifies them and their JSON's meaning (a source may re-encode them).
func checkManifests(c require.TestingT, want, got []runtimeconfig.BootstrapObject) {
	require.Len(c, got, len(want))
	for i := range want {
		require.Equal(c, [4]string{want[i].APIVersion, want[i].Kind, want[i].Namespace, want[i].Name},
			[4]string{got[i].APIVersion, got[i].Kind, got[i].Namespace, got[i].Name}, "object %d", i)
		require.JSONEq(c, string(want[i].JSON), string(got[i].JSON), "object %d", i)
	}
}
