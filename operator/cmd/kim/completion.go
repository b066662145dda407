package main

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kyma-project/kim/internal/cli"
)

// completionTimeout bounds the API call of a completion (the namespaces): a shell waits for it.
const completionTimeout = 5 * time.Second

// addFlagCompletions makes the flags complete their values as kubectl's do: -o the report formats, --context and
// --garden-context the contexts of the kubeconfig files in use, -n the namespaces of the selected cluster.
func addFlagCompletions(root *cobra.Command) {
	walk(root, func(c *cobra.Command) {
		complete := func(flag string, f cobra.CompletionFunc) {
			if c.Flags().Lookup(flag) != nil {
				_ = c.RegisterFlagCompletionFunc(flag, f) // fails only for an unknown or twice registered flag
			}
		}
		complete("output", cobra.FixedCompletions(cli.Outputs, cobra.ShellCompDirectiveNoFileComp))
		complete("context", contextCompletion("kubeconfig"))
		complete("garden-context", contextCompletion("garden-kubeconfig", "kubeconfig"))
		complete("namespace", namespaceCompletion)
	})
}

// contextCompletion completes the contexts of the first kubeconfig flag given, else of $KUBECONFIG or
// ~/.kube/config.
func contextCompletion(kubeconfigFlags ...string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		rules := clientcmd.NewDefaultClientConfigLoadingRules()
		for _, f := range kubeconfigFlags {
			if v, _ := cmd.Flags().GetString(f); v != "" {
				rules.ExplicitPath = v
				break
			}
		}
		raw, err := rules.Load()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for name, c := range raw.Contexts {
			if strings.HasPrefix(name, toComplete) {
				out = append(out, cobra.CompletionWithDesc(name, c.Cluster))
			}
		}
		slices.Sort(out)
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// namespaceCompletion lists the namespaces of the cluster --kubeconfig and --context select.
func namespaceCompletion(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	k := &kubeconfigFlags{}
	k.kubeconfig, _ = cmd.Flags().GetString("kubeconfig")
	k.context, _ = cmd.Flags().GetString("context")
	cfg, err := k.restConfig()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	cfg.Timeout = completionTimeout
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
	defer cancel()
	list, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, ns := range list.Items {
		if strings.HasPrefix(ns.Name, toComplete) {
			out = append(out, ns.Name)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
