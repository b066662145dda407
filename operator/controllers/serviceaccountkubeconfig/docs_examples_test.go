package serviceaccountkubeconfig_test

import (
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim/core/domain/sakubeconfig"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/operator/controllers/serviceaccountkubeconfig"
)

// TestDocumentedRequestsAreAllowed holds every complete ServiceAccountKubeconfig of docs/serviceaccount-kubeconfig.md
// and the shipped sample to the operator's policy with the landscape defaults: an example people copy must not be
// one the operator refuses (admission's CEL rules are a subset of the policy, so these pass admission as well).
func TestDocumentedRequestsAreAllowed(t *testing.T) {
	var docs []string
	page, err := os.ReadFile("../../../docs/serviceaccount-kubeconfig.md")
	if err != nil {
		t.Fatal(err)
	}
	for i, block := range strings.Split(string(page), "```yaml\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		if strings.Contains(block, "kind: ServiceAccountKubeconfig") {
			docs = append(docs, block)
		} else if i == 0 {
			t.Fatal("the first YAML block of the page is no ServiceAccountKubeconfig: the page changed, adapt the test")
		}
	}
	sample, err := os.ReadFile("../../../config/samples/infrastructuremanager_v1_serviceaccountkubeconfig.yaml")
	if err != nil {
		t.Fatal(err)
	}
	docs = append(docs, string(sample))
	if len(docs) < 3 {
		t.Fatalf("%d examples found, want the page's two and the sample", len(docs))
	}
	for _, doc := range docs {
		var obj imv1.ServiceAccountKubeconfig
		if err := yaml.UnmarshalStrict([]byte(doc), &obj); err != nil {
			t.Fatalf("example does not decode: %v\n%s", err, doc)
		}
		if err := (sakubeconfig.AccessPolicy{}).CheckRequest(serviceaccountkubeconfig.Request(&obj)); err != nil {
			t.Errorf("example %s is refused: %v", obj.Name, err)
		}
	}
}
