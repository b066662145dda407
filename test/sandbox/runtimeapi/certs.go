// Package runtimeapi runs the "runtime" (shoot) API servers of the garden-in-a-box: real envtest
// kube-apiservers that trust the shoot's client CA (the InternalSecret `<shoot>.ca-client`) and serve a
// certificate of the shoot's cluster CA (the ConfigMap `<shoot>.ca-cluster`), so a kubeconfig issued by the
// gardener-apiserver through `shoots/adminkubeconfig` authenticates against them.
package runtimeapi

import (
	"fmt"
	"net"
	"time"

	"github.com/gardener/gardener/pkg/utils/secrets"
)

// CAs are the certificate authorities of one simulated shoot.
type CAs struct {
	// Client signs client certificates (what Gardener stores in InternalSecret `<shoot>.ca-client`).
	Client *secrets.Certificate
	// Cluster signs the API server's serving certificate (ConfigMap `<shoot>.ca-cluster`, key ca.crt).
	Cluster *secrets.Certificate
}

// NewCAs generates a fresh pair of shoot CAs.
func NewCAs(name string) (CAs, error) {
	client, err := newCA(name + "-ca-client")
	if err != nil {
		return CAs{}, err
	}
	cluster, err := newCA(name + "-ca-cluster")
	if err != nil {
		return CAs{}, err
	}
	return CAs{Client: client, Cluster: cluster}, nil
}

func newCA(cn string) (*secrets.Certificate, error) {
	validity := 10 * 365 * 24 * time.Hour
	ca, err := (&secrets.CertificateSecretConfig{Name: cn, CommonName: cn, CertType: secrets.CACert, Validity: &validity}).GenerateCertificate()
	if err != nil {
		return nil, fmt.Errorf("generate CA %s: %w", cn, err)
	}
	return ca, nil
}

// servingCert issues a serving certificate for the loopback addresses, signed by the cluster CA.
func servingCert(clusterCA *secrets.Certificate) (*secrets.Certificate, error) {
	cert, err := (&secrets.CertificateSecretConfig{
		Name:        "kube-apiserver",
		CommonName:  "kube-apiserver",
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		CertType:    secrets.ServerCert,
		SigningCA:   clusterCA,
	}).GenerateCertificate()
	if err != nil {
		return nil, fmt.Errorf("generate serving certificate: %w", err)
	}
	return cert, nil
}

// clientCert issues a client certificate signed by the client CA.
func clientCert(clientCA *secrets.Certificate, user string, groups []string) (*secrets.Certificate, error) {
	validity := 24 * time.Hour
	cert, err := (&secrets.CertificateSecretConfig{
		Name:         user,
		CommonName:   user,
		Organization: groups,
		CertType:     secrets.ClientCert,
		SigningCA:    clientCA,
		Validity:     &validity,
	}).GenerateCertificate()
	if err != nil {
		return nil, fmt.Errorf("generate client certificate for %s: %w", user, err)
	}
	return cert, nil
}
