package runtimeapi

import (
	"crypto/x509"
	"testing"

	"github.com/gardener/gardener/pkg/utils"
	"github.com/gardener/gardener/pkg/utils/secrets"
)

// TestShootCAsWorkAsGardenersAndStayApart holds what the runtime API servers' certificates must do: the client CA
// is read and used as the gardener-apiserver reads and uses the InternalSecret `<shoot>.ca-client` (a client
// certificate Gardener's helper signs with it verifies), the serving certificate verifies for 127.0.0.1 under the
// cluster CA, and a client certificate of one shoot does not verify under another shoot's client CA.
func TestShootCAsWorkAsGardenersAndStayApart(t *testing.T) {
	a, err := NewCAs("shoot-a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewCAs("shoot-b")
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := secrets.LoadCertificate("ca-client", a.Client.PrivateKeyPEM, a.Client.CertificatePEM)
	if err != nil {
		t.Fatalf("the gardener-apiserver could not read the client CA: %v", err)
	}
	issued, err := (&secrets.CertificateSecretConfig{Name: "admin", CommonName: "admin", CertType: secrets.ClientCert, SigningCA: loaded}).GenerateCertificate()
	if err != nil {
		t.Fatalf("Gardener's helper could not sign with the client CA: %v", err)
	}
	// Gardener's Certificate holds the template it signed; what a server checks is the certificate in the PEM.
	issuedCert, err := utils.DecodeCertificate(issued.CertificatePEM)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := clientCert(a.Client, "sandbox-admin", []string{"system:masters"})
	if err != nil {
		t.Fatal(err)
	}
	clientAuth := []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	for name, cert := range map[string]*x509.Certificate{"Gardener's": issuedCert, "the sandbox's": ours.Certificate} {
		if _, err := cert.Verify(x509.VerifyOptions{Roots: pool(a.Client.Certificate), KeyUsages: clientAuth}); err != nil {
			t.Errorf("%s client certificate does not verify under its shoot's client CA: %v", name, err)
		}
		if _, err := cert.Verify(x509.VerifyOptions{Roots: pool(b.Client.Certificate), KeyUsages: clientAuth}); err == nil {
			t.Errorf("%s client certificate of shoot a verifies under shoot b's client CA", name)
		}
	}
	serving, err := servingCert(a.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := serving.Certificate.Verify(x509.VerifyOptions{Roots: pool(a.Cluster.Certificate), DNSName: "127.0.0.1"}); err != nil {
		t.Errorf("serving certificate for 127.0.0.1: %v", err)
	}
	if _, err := serving.Certificate.Verify(x509.VerifyOptions{Roots: pool(b.Cluster.Certificate), DNSName: "127.0.0.1"}); err == nil {
		t.Error("shoot a's serving certificate verifies under shoot b's cluster CA")
	}
}

func pool(certs ...*x509.Certificate) *x509.CertPool {
	p := x509.NewCertPool()
	for _, c := range certs {
		p.AddCert(c)
	}
	return p
}
