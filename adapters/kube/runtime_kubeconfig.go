package kube

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ErrKubeconfigNotSelfContained is the refusal of a runtime kubeconfig that would make the operator run a command or
// read one of its own files.
var ErrKubeconfigNotSelfContained = errors.New("the kubeconfig is not self-contained")

// RESTConfigFromRuntimeKubeconfig parses a runtime's kubeconfig read from a Secret: what Gardener issues, or what
// someone able to write that Secret put there. Only credentials carried in the kubeconfig itself are accepted.
// An exec plugin or auth provider would run code in the operator's container, and a file reference (token file,
// client certificate or key, CA file) would read the operator's own files, its mounted ServiceAccount token or
// garden credentials among them, and send them to whichever server the kubeconfig names. Such a kubeconfig is
// refused whole (errors wrap ErrKubeconfigNotSelfContained), naming every offending field; nothing is executed or
// read. Every kubeconfig Gardener issues (admin kubeconfigs) and the operator writes (ServiceAccount kubeconfigs)
// carries its data inline. The config's transport bounds every response body (MaxRuntimeResponseBytes, or the
// budget a request's context carries), so no answer of the runtime costs the caller without bound.
func RESTConfigFromRuntimeKubeconfig(kc []byte) (*rest.Config, error) {
	cfg, err := clientcmd.Load(kc)
	if err != nil {
		return nil, fmt.Errorf("parse kubeconfig: %w", err)
	}
	if bad := notSelfContained(cfg); len(bad) > 0 {
		return nil, fmt.Errorf("%w: %s set; only inline data (token, client-certificate-data, client-key-data, "+
			"certificate-authority-data) is accepted", ErrKubeconfigNotSelfContained, strings.Join(bad, ", "))
	}
	rc, err := clientcmd.NewDefaultClientConfig(*cfg, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	// Every response of the runtime is read within a byte budget, counted on the wire: an operation's own
	// (withResponseBudget), or MaxRuntimeResponseBytes per response.
	rc.Wrap(withResponseBudgets)
	return rc, nil
}

// notSelfContained lists the fields of every user and cluster of cfg (not only the current context's: a
// kubeconfig is judged whole) that execute or read something outside it.
func notSelfContained(cfg *clientcmdapi.Config) []string {
	var bad []string
	for name, u := range cfg.AuthInfos {
		if u == nil {
			continue
		}
		for field, set := range map[string]bool{
			"exec": u.Exec != nil, "auth-provider": u.AuthProvider != nil, "tokenFile": u.TokenFile != "",
			"client-certificate": u.ClientCertificate != "", "client-key": u.ClientKey != "",
		} {
			if set {
				bad = append(bad, fmt.Sprintf("users[%s].%s", name, field))
			}
		}
	}
	for name, c := range cfg.Clusters {
		if c != nil && c.CertificateAuthority != "" {
			bad = append(bad, fmt.Sprintf("clusters[%s].certificate-authority", name))
		}
	}
	sort.Strings(bad)
	return bad
}
