package main

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// kubeconfigFlags select a cluster the way kubectl does: the files in $KUBECONFIG (several, separated by the OS
// path list separator, merged) or ~/.kube/config, unless --kubeconfig names one file; the current context unless
// --context names another; the context's namespace unless --namespace/-n is given.
type kubeconfigFlags struct {
	kubeconfig string
	context    string
	namespace  string
	// deprecatedKubeconfig is the old --kcp-kubeconfig, kept so existing runbooks keep working.
	deprecatedKubeconfig string
	// kubeconfigFlag and contextFlag name the flags that select this cluster, for the error without a kubeconfig.
	kubeconfigFlag, contextFlag string
}

// bindKCPFlags registers kubectl's names: --kubeconfig, --context, --namespace and -n.
func bindKCPFlags(fs *pflag.FlagSet) *kubeconfigFlags {
	k := &kubeconfigFlags{kubeconfigFlag: "kubeconfig", contextFlag: "context"}
	fs.StringVar(&k.kubeconfig, "kubeconfig", "", "kubeconfig file of KCP (default: $KUBECONFIG, else ~/.kube/config)")
	fs.StringVar(&k.context, "context", "", "kubeconfig context of KCP (default: the current context)")
	fs.StringVarP(&k.namespace, "namespace", "n", "", "KCP namespace of the Runtimes (default: the context's namespace, else kcp-system)")
	fs.StringVar(&k.deprecatedKubeconfig, "kcp-kubeconfig", "", "KCP kubeconfig file")
	// Existing runbooks keep working; pflag hides the flag from the help and warns when it is used.
	_ = fs.MarkDeprecated("kcp-kubeconfig", "use --kubeconfig")
	return k
}

// bindGardenFlags registers --garden-kubeconfig and --garden-context: the garden is usually another context of
// the same kubeconfig files.
func bindGardenFlags(fs *pflag.FlagSet) *kubeconfigFlags {
	k := &kubeconfigFlags{kubeconfigFlag: "garden-kubeconfig", contextFlag: "garden-context"}
	fs.StringVar(&k.kubeconfig, "garden-kubeconfig", "", "kubeconfig file of the Gardener project (default: the same files as KCP)")
	fs.StringVar(&k.context, "garden-context", "", "kubeconfig context of the Gardener project")
	return k
}

func (k *kubeconfigFlags) clientConfig() clientcmd.ClientConfig {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = k.kubeconfig
	if rules.ExplicitPath == "" {
		rules.ExplicitPath = k.deprecatedKubeconfig
	}
	overrides := &clientcmd.ConfigOverrides{CurrentContext: k.context}
	overrides.Context.Namespace = k.namespace
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
}

// restConfig loads the selected cluster's connection.
func (k *kubeconfigFlags) restConfig() (*rest.Config, error) {
	cfg, err := k.clientConfig().ClientConfig()
	if clientcmd.IsEmptyConfig(err) {
		// client-go's own message sends the user to KUBERNETES_MASTER, which kubectl users never set.
		return nil, fmt.Errorf("no kubeconfig found%s: name one with --%s (and a context with --%s), set KUBECONFIG, or create %s",
			k.describe(), k.kubeconfigFlag, k.contextFlag, clientcmd.RecommendedHomeFile)
	}
	if err != nil {
		return nil, fmt.Errorf("kubeconfig%s: %w", k.describe(), err)
	}
	return cfg, nil
}

// defaultNamespace is where KEB's Runtimes live in every landscape.
const defaultNamespace = "kcp-system"

// runtimeNamespace is --namespace, else the namespace of the selected context, else defaultNamespace (kubectl would say
// "default", where no Runtime lives).
func (k *kubeconfigFlags) runtimeNamespace() (string, error) {
	if k.namespace != "" {
		return k.namespace, nil
	}
	raw, err := k.clientConfig().RawConfig()
	if err != nil {
		return "", fmt.Errorf("kubeconfig%s: %w", k.describe(), err)
	}
	name := k.context
	if name == "" {
		name = raw.CurrentContext
	}
	if c, ok := raw.Contexts[name]; ok && c.Namespace != "" {
		return c.Namespace, nil
	}
	return defaultNamespace, nil
}

func (k *kubeconfigFlags) set() bool { return k.kubeconfig != "" || k.context != "" }

func (k *kubeconfigFlags) describe() string {
	switch {
	case k.kubeconfig != "" && k.context != "":
		return fmt.Sprintf(" %s (context %s)", k.kubeconfig, k.context)
	case k.kubeconfig != "":
		return " " + k.kubeconfig
	case k.context != "":
		return " context " + k.context
	}
	return ""
}

var errNoGarden = errors.New("name the Gardener project's cluster with --garden-context (a context of your kubeconfig) or --garden-kubeconfig")
