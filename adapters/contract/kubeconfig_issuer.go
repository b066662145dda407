package contract

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kyma-project/kim/core/ports"
)

// IssuerFixture is an issuer under test with shoots in known states.
type IssuerFixture struct {
	// Issuer is the implementation under test.
	Issuer ports.KubeconfigIssuer
	// Now is the clock the issuer's expiry is measured against.
	Now func() time.Time
	// ReadyShoot can be issued kubeconfigs; NotReadyShoot exists but has no address/CA yet; MissingShoot does not exist.
	ReadyShoot, NotReadyShoot, MissingShoot string
	// Forbidden is the same kind of issuer with credentials that may not request admin kubeconfigs.
	Forbidden ports.KubeconfigIssuer
	// Verify, when set, proves that an issued kubeconfig works (for example by calling the shoot's API server).
	Verify func(t *testing.T, kubeconfig []byte)
}

// RunKubeconfigIssuerContract runs the issuer contract against the fixture made by newFixture.
func RunKubeconfigIssuerContract(t *testing.T, newFixture func(t *testing.T) IssuerFixture) {
	t.Run("a ready shoot gets a complete kubeconfig with the requested expiry", func(t *testing.T) {
		f := newFixture(t)
		const validity = time.Hour
		before := f.Now()
		got, err := f.Issuer.IssueAdminKubeconfig(t.Context(), f.ReadyShoot, validity)
		if err != nil {
			t.Fatalf("IssueAdminKubeconfig(%s): %v", f.ReadyShoot, err)
		}
		checkKubeconfig(t, got.Kubeconfig)
		// Gardener derives the expiry from the certificate, truncated to seconds.
		lo, hi := before.Add(validity-time.Minute), f.Now().Add(validity+time.Minute)
		if got.ExpiresAt.Before(lo) || got.ExpiresAt.After(hi) {
			t.Errorf("ExpiresAt = %s, want within [%s, %s]", got.ExpiresAt, lo, hi)
		}
		if f.Verify != nil {
			f.Verify(t, got.Kubeconfig)
		}
		again, err := f.Issuer.IssueAdminKubeconfig(t.Context(), f.ReadyShoot, validity)
		if err != nil {
			t.Fatalf("second IssueAdminKubeconfig: %v", err)
		}
		if bytes.Equal(again.Kubeconfig, got.Kubeconfig) {
			t.Error("two requests returned the same credential, want a new one per request")
		}
	})

	t.Run("errors are classified", func(t *testing.T) {
		f := newFixture(t)
		cases := []struct {
			reason string
			issuer ports.KubeconfigIssuer
			shoot  string
			want   error
		}{
			{reason: "a shoot that does not exist", issuer: f.Issuer, shoot: f.MissingShoot, want: ports.ErrShootNotFound},
			{reason: "a shoot still being created", issuer: f.Issuer, shoot: f.NotReadyShoot, want: ports.ErrShootNotReady},
			{reason: "credentials without permission", issuer: f.Forbidden, shoot: f.ReadyShoot, want: ports.ErrForbidden},
		}
		for _, tc := range cases {
			if tc.issuer == nil {
				t.Errorf("%s: fixture has no issuer for this case", tc.reason)
				continue
			}
			_, err := tc.issuer.IssueAdminKubeconfig(t.Context(), tc.shoot, time.Hour)
			if !errors.Is(err, tc.want) {
				t.Errorf("%s: err = %v, want %v", tc.reason, err, tc.want)
			}
		}
	})

	t.Run("a cancelled request fails", func(t *testing.T) {
		f := newFixture(t)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := f.Issuer.IssueAdminKubeconfig(ctx, f.ReadyShoot, time.Hour); err == nil {
			t.Error("IssueAdminKubeconfig with a cancelled context succeeded")
		}
	})
}

// checkKubeconfig asserts what consumers need: a current context whose cluster has a server and CA data.
func checkKubeconfig(t *testing.T, data []byte) {
	t.Helper()
	cfg, err := clientcmd.Load(data)
	if err != nil {
		t.Fatalf("issued kubeconfig does not parse: %v", err)
	}
	ctx, ok := cfg.Contexts[cfg.CurrentContext]
	if cfg.CurrentContext == "" || !ok {
		t.Fatalf("issued kubeconfig has no usable current-context (%q)", cfg.CurrentContext)
	}
	cluster, ok := cfg.Clusters[ctx.Cluster]
	if !ok || cluster.Server == "" || len(cluster.CertificateAuthorityData) == 0 {
		t.Fatalf("cluster %q of the current context lacks server or CA data", ctx.Cluster)
	}
}
