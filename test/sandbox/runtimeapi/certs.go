// Package runtimeapi runs the "runtime" (shoot) API servers of the garden-in-a-box: real envtest
// kube-apiservers that trust the shoot's client CA (the InternalSecret `<shoot>.ca-client`) and serve a
// certificate of the shoot's cluster CA (the ConfigMap `<shoot>.ca-cluster`), so a kubeconfig issued by the
// gardener-apiserver through `shoots/adminkubeconfig` authenticates against them.
package runtimeapi

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"

	"github.com/gardener/gardener/pkg/utils/secrets"
)

// Keys: every key of a runtime API server is ECDSA P-256, as envtest's own certificates are, except the client CA's,
// which the gardener-apiserver reads to sign admin kubeconfigs and accepts only as a PKCS #1 RSA key; that one is
// 2048 bits. (Gardener's certificate helper makes 3072-bit RSA keys: in the FIPS module a key took 0.33 s of CPU, and
// with five or more per server they were two thirds of an end-to-end test process's CPU. Each CA still has a key of
// its own, so a certificate of one shoot's CA never verifies against another's.)

// KeyPair is a certificate and its private key, PEM-encoded as the kube-apiserver and client-go read them.
type KeyPair struct {
	Certificate    *x509.Certificate
	CertificatePEM []byte
	Key            crypto.Signer
	PrivateKeyPEM  []byte
}

// CAs are the certificate authorities of one simulated shoot.
type CAs struct {
	// Client signs client certificates (what Gardener stores in InternalSecret `<shoot>.ca-client`).
	Client *secrets.Certificate
	// Cluster signs the API server's serving certificate (ConfigMap `<shoot>.ca-cluster`, key ca.crt).
	Cluster *KeyPair
}

// NewCAs generates a fresh pair of shoot CAs.
func NewCAs(name string) (CAs, error) {
	client, err := newClientCA(name + "-ca-client")
	if err != nil {
		return CAs{}, err
	}
	cluster, err := newCA(name + "-ca-cluster")
	if err != nil {
		return CAs{}, err
	}
	return CAs{Client: client, Cluster: cluster}, nil
}

// newClientCA makes the shoot's client CA in the form Gardener stores it (a PKCS #1 RSA key).
func newClientCA(cn string) (*secrets.Certificate, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("generate CA %s: %w", cn, err)
	}
	ca, err := issue(caTemplate(cn), nil, key, nil)
	if err != nil {
		return nil, fmt.Errorf("generate CA %s: %w", cn, err)
	}
	loaded, err := secrets.LoadCertificate(cn, ca.PrivateKeyPEM, ca.CertificatePEM)
	if err != nil {
		return nil, fmt.Errorf("generate CA %s: %w", cn, err)
	}
	return loaded, nil
}

// newCA makes a self-signed CA with an ECDSA key.
func newCA(cn string) (*KeyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate CA %s: %w", cn, err)
	}
	ca, err := issue(caTemplate(cn), nil, key, nil)
	if err != nil {
		return nil, fmt.Errorf("generate CA %s: %w", cn, err)
	}
	return ca, nil
}

// servingCert issues a serving certificate for the loopback addresses, signed by the cluster CA.
func servingCert(clusterCA *KeyPair) (*KeyPair, error) {
	tmpl := leafTemplate("kube-apiserver", nil, 10*365*24*time.Hour, x509.ExtKeyUsageServerAuth)
	tmpl.DNSNames = []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"}
	tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	cert, err := issueWithNewKey(tmpl, clusterCA.Certificate, clusterCA.Key)
	if err != nil {
		return nil, fmt.Errorf("generate serving certificate: %w", err)
	}
	return cert, nil
}

// clientCert issues a client certificate signed by the client CA.
func clientCert(clientCA *secrets.Certificate, user string, groups []string) (*KeyPair, error) {
	tmpl := leafTemplate(user, groups, 24*time.Hour, x509.ExtKeyUsageClientAuth)
	cert, err := issueWithNewKey(tmpl, clientCA.Certificate, clientCA.PrivateKey)
	if err != nil {
		return nil, fmt.Errorf("generate client certificate for %s: %w", user, err)
	}
	return cert, nil
}

func caTemplate(cn string) *x509.Certificate {
	tmpl := leafTemplate(cn, nil, 10*365*24*time.Hour)
	tmpl.IsCA = true
	tmpl.KeyUsage |= x509.KeyUsageCertSign | x509.KeyUsageCRLSign
	return tmpl
}

func leafTemplate(cn string, org []string, validity time.Duration, usage ...x509.ExtKeyUsage) *x509.Certificate {
	now := time.Now()
	return &x509.Certificate{
		Subject:               pkix.Name{CommonName: cn, Organization: org},
		NotBefore:             now.Add(-time.Minute), // clock skew between the signer and whoever checks
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           usage,
		BasicConstraintsValid: true,
	}
}

func issueWithNewKey(tmpl, parent *x509.Certificate, parentKey crypto.Signer) (*KeyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return issue(tmpl, parent, key, parentKey)
}

// issue signs tmpl for key with parent and parentKey, or self-signs it when parent is nil.
func issue(tmpl, parent *x509.Certificate, key, parentKey crypto.Signer) (*KeyPair, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), parentKey)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	var keyBlock *pem.Block
	switch k := key.(type) {
	case *rsa.PrivateKey:
		keyBlock = &pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}
	case *ecdsa.PrivateKey:
		raw, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			return nil, err
		}
		keyBlock = &pem.Block{Type: "EC PRIVATE KEY", Bytes: raw}
	default:
		return nil, fmt.Errorf("unsupported key type %T", key)
	}
	return &KeyPair{
		Certificate:    cert,
		CertificatePEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		Key:            key,
		PrivateKeyPEM:  pem.EncodeToMemory(keyBlock),
	}, nil
}
