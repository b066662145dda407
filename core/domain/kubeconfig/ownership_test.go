package kubeconfig

import (
	"errors"
	"testing"
)

func TestCheckSecret(t *testing.T) {
	const ns, id, other = "kcp-system", "rid", "other"
	cases := []struct {
		reason    string
		secretNS  string
		existing  *ExistingSecret
		want      SecretVerdict
		wantError error
	}{
		{"absent in its own namespace: may be created", ns, nil, SecretAbsent, nil},
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
		got, err := CheckSecret(ns, id, tc.secretNS, tc.existing)
		if !errors.Is(err, tc.wantError) || (tc.wantError == nil && err != nil) || (err == nil && got != tc.want) {
			t.Errorf("%s: got %v, %v; want %v, %v", tc.reason, got, err, tc.want, tc.wantError)
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
		{"a shoot of an older provisioner without runtime ID", ShootIdentity{Ref: ShootRef{Name: "c-1"}}, nil},
		{"another runtime's shoot", ShootIdentity{Ref: ShootRef{Name: "c-1"}, RuntimeID: "other"}, ErrShootOfAnotherRuntime},
		{"a shoot waiting for deletion", ShootIdentity{Ref: ShootRef{Name: "c-1"}, RuntimeID: "rid", PendingDeletionOf: "rid"}, ErrShootPendingDeletion},
	}
	for _, tc := range cases {
		if err := CheckShoot("rid", tc.shoot); !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
			t.Errorf("%s: %v, want %v", tc.reason, err, tc.want)
		}
	}
}
