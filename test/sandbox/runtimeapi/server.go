package runtimeapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	"github.com/gardener/gardener/pkg/utils/secrets"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// ServerOptions configure one runtime API server.
type ServerOptions struct {
	// BinaryAssetsDirectory holds kube-apiserver (default: $KUBEBUILDER_ASSETS).
	BinaryAssetsDirectory string
	// EtcdURL is the etcd to store data in; several servers may share one etcd with different EtcdPrefix.
	EtcdURL *url.URL
	// EtcdPrefix separates this server's data from other servers on the same etcd.
	EtcdPrefix string
	// CAs are the shoot CAs the server trusts (client) and serves with (cluster).
	CAs CAs
	// Out and Err receive the kube-apiserver output (discarded when nil).
	Out, Err io.Writer
	// StartTimeout bounds the start of the kube-apiserver (0: envtest's 20 s). A start cut short is work lost and
	// started again: on a busy 2-core machine a start takes longer than 20 s, and then none ever finished.
	StartTimeout time.Duration
}

// Server is a running runtime kube-apiserver.
type Server struct {
	api *envtest.APIServer
	dir string
	cas CAs
	// pausedPID is the process stopped by Pause (0: running).
	pausedPID int
	// oidcMu guards oidcServed, true once the OpenIDConnect CRD is installed.
	oidcMu     sync.Mutex
	oidcServed bool
}

// StartServer starts a kube-apiserver that trusts opts.CAs.Client and serves a certificate of opts.CAs.Cluster
// on 127.0.0.1 with a free port.
func StartServer(opts ServerOptions) (*Server, error) {
	if opts.EtcdURL == nil {
		return nil, fmt.Errorf("runtime API server: etcd URL is required")
	}
	if opts.CAs.Client == nil || opts.CAs.Cluster == nil {
		return nil, fmt.Errorf("runtime API server: client and cluster CA are required")
	}
	dir, err := os.MkdirTemp("", "kim-runtime-apiserver-")
	if err != nil {
		return nil, fmt.Errorf("runtime API server: create cert dir: %w", err)
	}
	s := &Server{dir: dir, cas: opts.CAs}
	if err := s.writeServingFiles(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	api := &envtest.APIServer{
		CertDir:       dir,
		EtcdURL:       opts.EtcdURL,
		Out:           opts.Out,
		Err:           opts.Err,
		SecureServing: envtest.SecureServing{ListenAddr: envtest.ListenAddr{Address: "127.0.0.1"}, CA: opts.CAs.Cluster.CertificatePEM},
		StartTimeout:  opts.StartTimeout,
		StopTimeout:   opts.StartTimeout,
	}
	api.Authn = &shootAuthn{ca: opts.CAs.Client}
	if opts.BinaryAssetsDirectory != "" {
		api.Path = filepath.Join(opts.BinaryAssetsDirectory, "kube-apiserver")
	}
	if opts.EtcdPrefix != "" {
		api.Configure().Set("etcd-prefix", opts.EtcdPrefix)
	}
	// Nothing in the simulated runtime runs controllers that would create default service accounts.
	api.Configure().Set("disable-admission-plugins", "ServiceAccount")
	// The audit log records who did what, as a real runtime's does; only service accounts' requests, so the
	// operator's admin traffic costs nothing. (Tokens are service-account tokens signed with sa-signer.key, which
	// envtest passes as --service-account-signing-key-file; TokenRequest is served with it.)
	api.Configure().Set("audit-policy-file", filepath.Join(dir, auditPolicyFile))
	api.Configure().Set("audit-log-path", filepath.Join(dir, auditLogFile))
	if err := api.Start(); err != nil {
		_ = api.Stop()
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("start runtime kube-apiserver: %w", err)
	}
	s.api = api
	if err := s.bootstrap(); err != nil {
		return nil, errors.Join(err, s.Stop())
	}
	return s, nil
}

// bootstrap creates what Gardener puts into every shoot so that its kubeconfigs are authorised: the admin
// kubeconfig's certificate carries group gardener.cloud:system:admins when the requester may list Secrets
// cluster-wide and gardener.cloud:project:admins otherwise (a project member such as the operator's
// ServiceAccount), both bound to cluster-admin; the viewer kubeconfig's gardener.cloud:{system,project}:viewers are
// bound to view.
func (s *Server) bootstrap() error {
	cfg, err := s.AdminConfig()
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("runtime API server client: %w", err)
	}
	for group, role := range map[string]string{
		v1beta1constants.ShootSystemAdminsGroupName: "cluster-admin", v1beta1constants.ShootProjectAdminsGroupName: "cluster-admin",
		v1beta1constants.ShootSystemViewersGroupName: "view", v1beta1constants.ShootProjectViewersGroupName: "view",
	} {
		crb := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: group},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: group}},
		}
		if _, err := cs.RbacV1().ClusterRoleBindings().Create(context.Background(), crb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("runtime API server: bind %s: %w", group, err)
		}
	}
	return nil
}

// writeServingFiles pre-populates the cert dir so that envtest does not generate its own serving CA.
func (s *Server) writeServingFiles() error {
	serving, err := servingCert(s.cas.Cluster)
	if err != nil {
		return err
	}
	saKey, err := newCA("service-account-signer")
	if err != nil {
		return err
	}
	files := map[string][]byte{
		"apiserver.crt": serving.CertificatePEM, "apiserver.key": serving.PrivateKeyPEM,
		"sa-signer.crt": saKey.CertificatePEM, "sa-signer.key": saKey.PrivateKeyPEM,
		auditPolicyFile: []byte(auditPolicy),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(s.dir, name), data, 0o600); err != nil {
			return fmt.Errorf("runtime API server: write %s: %w", name, err)
		}
	}
	return nil
}

// ServeOpenIDConnect installs the OpenIDConnect CRD, as shoot-oidc-service does in a shoot (once; idempotent).
func (s *Server) ServeOpenIDConnect(ctx context.Context) error {
	s.oidcMu.Lock()
	defer s.oidcMu.Unlock()
	if s.oidcServed {
		return nil
	}
	cfg, err := s.AdminConfig()
	if err != nil {
		return err
	}
	if err := InstallOpenIDConnectCRD(ctx, cfg); err != nil {
		return err
	}
	s.oidcServed = true
	return nil
}

// Audit logging of the runtime API servers: every request of a service account, at Metadata level (who, what,
// which object, the answer), as JSON lines.
const (
	auditPolicyFile = "audit-policy.yaml"
	auditLogFile    = "audit.log"
	auditPolicy     = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  userGroups: ["system:serviceaccounts"]
- level: None
`
)

// AuditLogPath is the server's audit log: one JSON audit.k8s.io/v1 Event a line, for requests of service accounts.
func (s *Server) AuditLogPath() string { return filepath.Join(s.dir, auditLogFile) }

// URL is the https address of the server (what goes into the shoot's status.advertisedAddresses).
func (s *Server) URL() string { return s.api.SecureServing.URL("https", "").String() }

// CAs returns the certificate authorities of the server.
func (s *Server) CAs() CAs { return s.cas }

// AdminConfig returns a rest.Config for a system:masters user with a client certificate of the shoot's client CA.
func (s *Server) AdminConfig() (*rest.Config, error) {
	return s.api.AddUser(envtest.User{Name: "sandbox-admin", Groups: []string{"system:masters"}},
		&rest.Config{Host: s.URL(), TLSClientConfig: rest.TLSClientConfig{CAData: s.cas.Cluster.CertificatePEM}})
}

// Stop terminates the server and removes its files.
func (s *Server) Stop() error {
	if err := s.Resume(); err != nil {
		return err
	}
	err := s.api.Stop()
	if rmErr := os.RemoveAll(s.dir); rmErr != nil && err == nil {
		err = rmErr
	}
	if err != nil {
		return fmt.Errorf("stop runtime kube-apiserver: %w", err)
	}
	return nil
}

// shootAuthn is an envtest authenticator that trusts an externally given client CA (the shoot's) instead of
// generating one, so certificates Gardener signs with that CA are accepted.
type shootAuthn struct {
	ca   *secrets.Certificate
	path string
}

func (a *shootAuthn) Configure(workDir string, args *envtest.Arguments) error {
	a.path = filepath.Join(workDir, "shoot-client-ca.crt")
	args.Set("client-ca-file", a.path)
	return nil
}

func (a *shootAuthn) Start() error {
	if a.path == "" {
		return fmt.Errorf("shoot authenticator started before it was configured")
	}
	if err := os.WriteFile(a.path, a.ca.CertificatePEM, 0o600); err != nil {
		return fmt.Errorf("write shoot client CA: %w", err)
	}
	return nil
}

func (a *shootAuthn) AddUser(user envtest.User, base *rest.Config) (*rest.Config, error) {
	cert, err := clientCert(a.ca, user.Name, user.Groups)
	if err != nil {
		return nil, err
	}
	cfg := rest.CopyConfig(base)
	cfg.CertData, cfg.KeyData = cert.CertificatePEM, cert.PrivateKeyPEM
	return cfg, nil
}

func (a *shootAuthn) Stop() error { return nil }
