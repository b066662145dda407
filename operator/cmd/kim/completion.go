package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kyma-project/kim/internal/cli"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
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
	cfg, _, err := completionCluster(cmd)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
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

// restorableShoots completes the shoot of `restore`: the shoots waiting for deletion, as the KCP's DeletionRecords
// of the selected namespace name them (a record is named after its shoot), described by their runtime and when
// the shoot would be deleted. Only the KCP is asked: the garden flags are often not typed yet.
func restorableShoots(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	cfg, namespace, err := completionCluster(cmd)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
	defer cancel()
	// One request, no discovery: the resource is the operator's own.
	records, err := dyn.Resource(imv1.GroupVersion.WithResource("deletionrecords")).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, r := range records.Items {
		if !strings.HasPrefix(r.GetName(), toComplete) {
			continue
		}
		var rec imv1.DeletionRecord
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(r.Object, &rec); err != nil {
			out = append(out, r.GetName())
			continue
		}
		out = append(out, cobra.CompletionWithDesc(rec.Name, fmt.Sprintf("runtime %s, deleted at %s", rec.Spec.RuntimeID,
			rec.Spec.DueAt.UTC().Format(time.RFC3339))))
	}
	slices.Sort(out)
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completionCluster is the KCP connection a completion asks (--kubeconfig, --context, bounded by completionTimeout)
// and the namespace --namespace or the context selects.
func completionCluster(cmd *cobra.Command) (*rest.Config, string, error) {
	k := &kubeconfigFlags{}
	k.kubeconfig, _ = cmd.Flags().GetString("kubeconfig")
	k.context, _ = cmd.Flags().GetString("context")
	k.namespace, _ = cmd.Flags().GetString("namespace")
	cfg, err := k.restConfig()
	if err != nil {
		return nil, "", err
	}
	cfg.Timeout = completionTimeout
	namespace, err := k.runtimeNamespace()
	return cfg, namespace, err
}
