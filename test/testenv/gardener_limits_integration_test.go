package testenv

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	securityv1alpha1 "github.com/gardener/gardener/pkg/apis/security/v1alpha1"
	authorizationv1 "k8s.io/api/authorization/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/test/testenv/garden"
)

// The cloud credentials of the catalogue's binding aws-kyma-1 (a Secret of the same name, as KEB's pool holds them).
const cloudCredentials = "aws-kyma-1"

// gardenAsOperator grants config/gardener in the shared garden-in-a-box and returns an admin client, a client
// impersonating the operator's Gardener ServiceAccount (no client guard: the API servers decide) and the project.
func gardenAsOperator(t *testing.T) (admin, kim client.Client, project string) {
	t.Helper()
	env := garden.Shared(t, garden.Options{})
	project = env.Catalogue.ProjectNamespace()
	cfg, err := grantGarden(t.Context(), RepoRoot(), env.Garden, project)
	if err != nil {
		t.Fatal(err)
	}
	kim, err = client.New(cfg, client.Options{Scheme: env.GardenClient.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return env.GardenClient, kim, project
}

// refusal is a write the operator's identity must see refused by a ValidatingAdmissionPolicy.
type refusal struct {
	what, policy string
	do           func() error
}

// refusedByPolicies asserts that each write is refused by its policy. A policy takes effect a moment after it is
// created (the API server loads it through a watch), so the writes are tried until each policy has refused one of
// them (for at most 30 s); then each write is judged once. A write that a policy wrongly admits fails at once
// instead of after 30 s of waiting for a refusal that never comes (a safety mutant's judge took 92 s for two).
func refusedByPolicies(t *testing.T, refusals ...refusal) {
	t.Helper()
	refused := func(r refusal, err error) bool {
		return (apierrors.IsInvalid(err) || apierrors.IsForbidden(err)) && strings.Contains(err.Error(), r.policy)
	}
	inEffect := map[string]bool{}
	waiting := func() bool {
		return slices.ContainsFunc(refusals, func(r refusal) bool { return !inEffect[r.policy] })
	}
	for deadline := time.Now().Add(30 * time.Second); waiting() && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		for _, r := range refusals {
			if !inEffect[r.policy] && refused(r, r.do()) {
				inEffect[r.policy] = true
			}
		}
	}
	for _, r := range refusals {
		if err := r.do(); !refused(r, err) {
			note := ""
			if !inEffect[r.policy] {
				note = " (the policy refused none of its writes within 30 s)"
			}
			t.Errorf("%s: got %v, want refused by ValidatingAdmissionPolicy %s%s", r.what, err, r.policy, note)
		}
	}
}

// TestIntegrationGardenerWritesLimitedByAdmissionPolicy proves config/gardener's ValidatingAdmissionPolicies on the
// real API servers of garden-in-a-box: the operator's identity, though its Role grants create and delete on every
// Secret and patch on every CredentialsBinding of the project, cannot delete or overwrite the cloud credentials,
// create a Secret that is not its copy, or change anything of a CredentialsBinding but the label dirty; what the
// operator really does still passes. Every write is a server-side dry run (admission runs, nothing persists).
func TestIntegrationGardenerWritesLimitedByAdmissionPolicy(t *testing.T) {
	admin, kim, ns := gardenAsOperator(t)
	ctx := t.Context()
	dry := []client.DeleteOption{client.DryRunAll}
	copyLabels := map[string]string{"operator.kyma-project.io/managed-by": "infrastructure-manager", "kyma-project.io/runtime-id": "rt-1"}
	secret := func(name string, labels map[string]string, immutable bool) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}, Immutable: ptr.To(immutable),
			Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"username": []byte("u"), "password": []byte("p")}}
	}
	const secretsPolicy, bindingsPolicy = "kim-gardener-secrets", "kim-gardener-credentialsbindings"

	// An unlabelled reg-cache-* Secret someone else placed: not the operator's to delete.
	foreign := secret("reg-cache-foreign-limits", nil, true)
	if err := admin.Create(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Delete(context.Background(), foreign) })
	merge := func(name, body string) error {
		b := &securityv1alpha1.CredentialsBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		return kim.Patch(ctx, b, client.RawPatch(types.MergePatchType, []byte(body)), client.DryRunAll)
	}
	refusedByPolicies(t,
		refusal{"delete the cloud credentials", secretsPolicy, func() error {
			return kim.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cloudCredentials}}, dry...)
		}},
		refusal{"create a Secret that is not a copy", secretsPolicy, func() error {
			return kim.Create(ctx, secret("not-a-copy", copyLabels, true), client.DryRunAll)
		}},
		refusal{"create a reg-cache-* Secret without the operator's label", secretsPolicy, func() error {
			return kim.Create(ctx, secret("reg-cache-unlabelled", nil, true), client.DryRunAll)
		}},
		refusal{"create a mutable copy", secretsPolicy, func() error {
			return kim.Create(ctx, secret("reg-cache-mutable", copyLabels, false), client.DryRunAll)
		}},
		refusal{"delete a reg-cache-* Secret that is not labelled as the operator's", secretsPolicy, func() error {
			return kim.Delete(ctx, foreign.DeepCopy(), dry...)
		}},
		refusal{"label a binding shared", bindingsPolicy, func() error {
			return merge(cloudCredentials, `{"metadata":{"labels":{"shared":"true"}}}`)
		}},
		refusal{"set the label dirty to another value", bindingsPolicy, func() error {
			return merge(cloudCredentials, `{"metadata":{"labels":{"dirty":"false"}}}`)
		}},
		// (Its credentialsRef Gardener's validation keeps immutable already.)
		refusal{"annotate a binding", bindingsPolicy, func() error {
			return merge(cloudCredentials, `{"metadata":{"annotations":{"kyma-project.io/anything":"x"}}}`)
		}},
	)

	// What the operator does passes the same policies.
	own := secret("reg-cache-own-limits", copyLabels, true)
	allowed := map[string]func() error{
		"create its copy": func() error {
			fresh := own.DeepCopy()
			fresh.Name = "reg-cache-new-limits"
			return kim.Create(ctx, fresh, client.DryRunAll)
		},
		"delete its copy": func() error {
			if err := admin.Create(ctx, own.DeepCopy()); err != nil && !apierrors.IsAlreadyExists(err) {
				return err
			}
			return kim.Delete(ctx, own.DeepCopy(), dry...)
		},
		"set dirty=true":   func() error { return merge(cloudCredentials, `{"metadata":{"labels":{"dirty":"true"}}}`) },
		"remove the label": func() error { return merge(cloudCredentials, `{"metadata":{"labels":{"dirty":null}}}`) },
	}
	t.Cleanup(func() { _ = admin.Delete(context.Background(), own.DeepCopy()) })
	for what, do := range allowed {
		if err := do(); err != nil {
			t.Errorf("%s: %v, want allowed", what, err)
		}
	}
}

// TestIntegrationShootResourcesNeedSecretGet pins the fact that keeps get on Secrets in the operator's Role
// (docs/adr/0007): Gardener's ResourceReferenceManager admits a shoot whose spec.resources reference a Secret only
// from a user the authorizer allows to get that Secret. An identity that may create shoots but not get Secrets is
// refused; the operator's identity is admitted. And, by SubjectAccessReview, exactly what that get exposes: the
// operator's identity may get the cloud credentials a CredentialsBinding names, but never list, watch, update or
// patch a Secret.
func TestIntegrationShootResourcesNeedSecretGet(t *testing.T) {
	admin, kim, ns := gardenAsOperator(t)
	env := garden.Shared(t, garden.Options{})
	ctx := t.Context()
	copyName := "reg-cache-fact-resources"
	cp := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: copyName,
		Labels: map[string]string{"operator.kyma-project.io/managed-by": "infrastructure-manager"}},
		Immutable: ptr.To(true), Data: map[string][]byte{"username": []byte("u"), "password": []byte("p")}}
	if err := admin.Create(ctx, cp); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Delete(context.Background(), cp) })

	// An identity that may create shoots and nothing else.
	role := &rbacv1.Role{ObjectMeta: metaOf("shoot-writer-without-secrets", ns), Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{"core.gardener.cloud"}, Resources: []string{"shoots"}, Verbs: []string{"create"}}}}
	writerCfg, err := grant(ctx, env.Garden, []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metaOf("shoot-writer", ns)}, role,
		&rbacv1.RoleBinding{ObjectMeta: metaOf("shoot-writer-without-secrets", ns),
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "shoot-writer", Namespace: ns}}},
	}, ns, "shoot-writer")
	if err != nil {
		t.Fatal(err)
	}
	writer := newGardenClient(t, writerCfg, admin)

	s, err := env.NewShoot("fact-ref", "aws")
	if err != nil {
		t.Fatal(err)
	}
	s.Namespace = ns
	s.Spec.Resources = []gardencorev1beta1.NamedResourceReference{{Name: "creds",
		ResourceRef: autoscalingv1.CrossVersionObjectReference{APIVersion: "v1", Kind: "Secret", Name: copyName}}}
	err = writer.Create(ctx, s.DeepCopy(), client.DryRunAll)
	if err == nil || !strings.Contains(err.Error(), "cannot reference a resource you are not allowed to read") {
		t.Errorf("shoot referencing a Secret, written by an identity without get on Secrets: %v, want refused by ResourceReferenceManager", err)
	}
	if err := kim.Create(ctx, s.DeepCopy(), client.DryRunAll); err != nil {
		t.Errorf("the same shoot written by the operator's identity: %v, want admitted", err)
	}

	user := serviceaccount.MakeUsername(ns, "kim")
	groups := append(serviceaccount.MakeGroupNames(ns), "system:authenticated")
	can := func(verb, name string) bool {
		r := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user, Groups: groups,
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Resource: "secrets", Name: name}}}
		if err := admin.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
		return r.Status.Allowed
	}
	// The remaining exposure, stated as a fact so that a change of it (either way) is seen: RBAC cannot limit get
	// to the copies' dynamic names, so the operator's identity may read the cloud credentials by name.
	if !can("get", cloudCredentials) {
		t.Errorf("SubjectAccessReview: get Secret %s denied; the Role no longer grants get on Secrets: update docs/adr/0007", cloudCredentials)
	}
	for _, verb := range []string{"list", "watch", "update", "patch", "deletecollection"} {
		if can(verb, "") {
			t.Errorf("SubjectAccessReview: %s Secrets allowed to the operator's identity, want denied", verb)
		}
	}
}

// newGardenClient is a client for cfg with the scheme of like.
func newGardenClient(t *testing.T, cfg *rest.Config, like client.Client) client.Client {
	t.Helper()
	c, err := client.New(cfg, client.Options{Scheme: like.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
