package manifests_test

import (
	"context"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
)

// checkScraper asks the API server's authorizer what the installed scraper identity may do: `get /metrics` (what
// the metrics endpoint's SubjectAccessReview asks), and nothing else it is tempting to grant a monitoring account.
func checkScraper(t *testing.T, k *kcp) {
	user := "system:serviceaccount:" + kcpNamespace + ":kim-metrics-scraper"
	review := func(attrs authorizationv1.SubjectAccessReviewSpec) bool {
		attrs.User = user
		attrs.Groups = []string{"system:serviceaccounts", "system:serviceaccounts:" + kcpNamespace, "system:authenticated"}
		sar := &authorizationv1.SubjectAccessReview{Spec: attrs}
		if err := k.client.Create(context.Background(), sar); err != nil {
			t.Fatalf("SubjectAccessReview: %v", err)
		}
		return sar.Status.Allowed
	}
	if !review(authorizationv1.SubjectAccessReviewSpec{NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"}}) {
		t.Errorf("%s may not get /metrics: the ServiceMonitor's scrapes would be refused", user)
	}
	for _, ra := range []authorizationv1.ResourceAttributes{
		{Namespace: kcpNamespace, Verb: "get", Resource: "secrets"},
		{Namespace: kcpNamespace, Verb: "list", Group: "infrastructuremanager.kyma-project.io", Resource: "runtimes"},
		{Verb: "create", Group: "authentication.k8s.io", Resource: "tokenreviews"},
	} {
		if review(authorizationv1.SubjectAccessReviewSpec{ResourceAttributes: &ra}) {
			t.Errorf("%s may %s %s/%s: the scraper gets more than /metrics", user, ra.Verb, ra.Group, ra.Resource)
		}
	}
}
