package app

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// TestMetricsEndpointServesTheMountedCertificate starts the metrics server as the manager configures it with a
// certificate in --metrics-cert-path: a client that trusts only that certificate's CA verifies the endpoint under
// its service name (what the ServiceMonitor's tlsConfig does), and HTTP/2 is not negotiated.
func TestMetricsEndpointServesTheMountedCertificate(t *testing.T) {
	dir := t.TempDir()
	pool := writeServingCert(t, dir, "kim-controller-manager-metrics-service.kcp-system.svc")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	opts := DefaultOptions()
	opts.MetricsAddr, opts.MetricsCertDir = addr, dir
	m := metricsOptions(opts)
	m.FilterProvider = nil // authentication needs an API server; this test is about TLS
	srv, err := metricsserver.NewServer(m, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = srv.Start(ctx) }()

	var conn *tls.Conn
	deadline := time.Now().Add(20 * time.Second)
	for {
		conn, err = tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, ServerName: "kim-controller-manager-metrics-service.kcp-system.svc",
			NextProtos: []string{"h2", "http/1.1"}, MinVersion: tls.VersionTLS12})
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("a client trusting the mounted certificate's CA cannot verify the endpoint: %v", err)
	}
	defer func() { _ = conn.Close() }()
	if p := conn.ConnectionState().NegotiatedProtocol; p == "h2" {
		t.Errorf("negotiated %q; want HTTP/1.1 without --enable-http2", p)
	}
}

// writeServingCert writes a self-signed serving certificate for dnsName as tls.crt/tls.key into dir and returns a
// pool that trusts it.
func writeServingCert(t *testing.T, dir, dnsName string) *x509.CertPool {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: dnsName}, DNSNames: []string{dnsName},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	return pool
}
