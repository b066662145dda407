package kubeconfig

import (
	"errors"
	"testing"
)

func TestCheckClusterSecret(t *testing.T) {
	const ns, id, other = "kcp-system", "rid", "other"
	cases := []struct {
		reason    string
		secretNS  string
		existing  *ExistingSecret
		want      SecretVerdict
		wantError error
	}{
		{"absent kubeconfig-<name> in its own namespace: may be created", ns, nil, SecretAbsent, nil},
		{"absent in another namespace: refused", "kube-system", nil, 0, ErrSecretOtherNamespace},
		{"written for this GardenerCluster", ns, &ExistingSecret{Name: "anything", Annotations: map[string]string{AnnotationOwner: ns + "/" + id}}, SecretOwned, nil},
		{"written for another GardenerCluster", ns, &ExistingSecret{Name: SecretName(id), Annotations: map[string]string{AnnotationOwner: ns + "/" + other}}, 0, ErrSecretNotOwned},
		{"written for the same name in another namespace", ns, &ExistingSecret{Name: SecretName(id), Annotations: map[string]string{AnnotationOwner: "elsewhere/" + id}}, 0, ErrSecretNotOwned},
		{"KEB's legacy Secret of this runtime", ns, &ExistingSecret{Name: SecretName(id), Labels: map[string]string{LabelRuntimeID: id}}, SecretLegacy, nil},
		{"a legacy Secret without labels, named for this runtime", ns, &ExistingSecret{Name: SecretName(id)}, SecretLegacy, nil},
		{"named for this runtime but labelled for another", ns, &ExistingSecret{Name: SecretName(id), Labels: map[string]string{LabelRuntimeID: other}}, 0, ErrSecretNotOwned},
		{"cluster-name label of another runtime", ns, &ExistingSecret{Name: SecretName(id), Labels: map[string]string{LabelClusterName: other}}, 0, ErrSecretNotOwned},
		{"any other Secret without owner", ns, &ExistingSecret{Name: "db-credentials"}, 0, ErrSecretNotOwned},
		{"another runtime's legacy Secret", ns, &ExistingSecret{Name: SecretName(other)}, 0, ErrSecretNotOwned},
	}
	for _, tc := range cases {
		name := SecretName(id)
		if tc.existing != nil {
			name = tc.existing.Name
		}
		got, err := CheckClusterSecret(ns, id, tc.secretNS, name, tc.existing)
		if !errors.Is(err, tc.wantError) || (tc.wantError == nil && err != nil) || (err == nil && got != tc.want) {
			t.Errorf("%s: got %v, %v; want %v, %v", tc.reason, got, err, tc.want, tc.wantError)
		}
	}
}

// TestCheckClusterSecretNewNames: a GardenerCluster may create only kubeconfig-<its name>. Any other absent name is refused
// (ErrSecretName): it could create another runtime's kubeconfig Secret before that runtime's GardenerCluster does
// (which then finds it owned by someone else, and KEB reads the squatter's kubeconfig), or a Secret another team is
// about to create. A legacy name that exists and was written for the GardenerCluster keeps working.
func TestCheckClusterSecretNewNames(t *testing.T) {
	const ns, id = "kcp-system", "rid"
	for _, tc := range []struct {
		reason, name string
		existing     *ExistingSecret
		want         SecretVerdict
		wantError    error
	}{
		{"its own kubeconfig Secret, absent", SecretName(id), nil, SecretAbsent, nil},
		{"another runtime's kubeconfig Secret, absent", SecretName("other"), nil, 0, ErrSecretName},
		{"a name of another team, absent", "db-credentials", nil, 0, ErrSecretName},
		{"the prefix alone", SecretName(""), nil, 0, ErrSecretName},
		{"a legacy name that exists and was written for it", "my-old-kubeconfig",
			&ExistingSecret{Name: "my-old-kubeconfig", Annotations: map[string]string{AnnotationOwner: ns + "/" + id}}, SecretOwned, nil},
	} {
		got, err := CheckClusterSecret(ns, id, ns, tc.name, tc.existing)
		if !errors.Is(err, tc.wantError) || (tc.wantError == nil && err != nil) || (err == nil && got != tc.want) {
			t.Errorf("%s: got %v, %v; want %v, %v", tc.reason, got, err, tc.want, tc.wantError)
		}
		if tc.wantError != nil && (!Refusal(err) || Refused(err).Reason != ReasonSecretName) {
			t.Errorf("%s: %v is no refusal with reason %s", tc.reason, err, ReasonSecretName)
		}
	}
}

func TestCheckShoot(t *testing.T) {
	cases := []struct {
		reason string
		shoot  ShootIdentity
		want   error
	}{
		{"the runtime's own shoot", ShootIdentity{Ref: ShootRef{Name: "c-1"}, RuntimeID: "rid"}, nil},
		{"a shoot without runtime ID is nobody's: refused", ShootIdentity{Ref: ShootRef{Name: "c-1"}}, ErrShootOfAnotherRuntime},
		{"another runtime's shoot", ShootIdentity{Ref: ShootRef{Name: "c-1"}, RuntimeID: "other"}, ErrShootOfAnotherRuntime},
		{"a shoot waiting for deletion", ShootIdentity{Ref: ShootRef{Name: "c-1"}, RuntimeID: "rid", PendingDeletionOf: "rid"}, ErrShootPendingDeletion},
	}
	for _, tc := range cases {
		if err := CheckShoot("rid", tc.shoot); !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
			t.Errorf("%s: %v, want %v", tc.reason, err, tc.want)
		}
	}
}
