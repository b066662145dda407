package gardener

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kyma-project/kim/core/ports"
)

// TestClassifyMissingReference: the garden's refusal of a shoot whose spec.resources entry names a Secret that does
// not exist (Gardener's reference admission, its own words) is told apart from other refusals, naming the entry, and
// stays a rejection for the callers that only ask that (issue 39 item 2: a missing audit log Secret is its own,
// stable condition).
func TestClassifyMissingReference(t *testing.T) {
	shoots := schema.GroupResource{Group: "core.gardener.cloud", Resource: "shoots"}
	cases := []struct {
		name         string
		err          error
		wantResource string
	}{
		{name: "audit log Secret missing", err: apierrors.NewForbidden(shoots, "c-91f0e7a",
			errors.New(`failed to resolve resource reference "auditlog-credentials": secrets "al-west" not found`)),
			wantResource: "auditlog-credentials"},
		{name: "another entry's Secret missing", err: apierrors.NewForbidden(shoots, "c-91f0e7a",
			errors.New(`failed to resolve resource reference "shoot-dns-service-route53": secrets "route53" not found`)),
			wantResource: "shoot-dns-service-route53"},
		{name: "a reference that may not be read is another refusal", err: apierrors.NewForbidden(shoots, "c-91f0e7a",
			errors.New("cannot reference a resource you are not allowed to read"))},
		{name: "an invalid spec is another refusal", err: apierrors.NewInvalid(schema.GroupKind{Group: "core.gardener.cloud", Kind: "Shoot"},
			"c-91f0e7a", nil)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := classify("apply shoot c-91f0e7a", tc.err)
			if !errors.Is(got, ports.ErrShootRejected) {
				t.Fatalf("%v is not a rejection", got)
			}
			var mr *ports.MissingReferenceError
			switch found := errors.As(got, &mr); {
			case tc.wantResource == "" && found:
				t.Fatalf("%v classified as a missing reference %q", got, mr.Resource)
			case tc.wantResource != "" && (!found || mr.Resource != tc.wantResource):
				t.Fatalf("%v: want missing reference %q", got, tc.wantResource)
			}
			if fmt.Sprint(got) == "" {
				t.Fatal("empty message")
			}
		})
	}
}
