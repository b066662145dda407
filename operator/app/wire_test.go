package app

import (
	"testing"

	"github.com/kyma-project/kim/core/domain/wire"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// TestPublicAPIRepeatsTheWireNames: the public API module cannot import core/domain/wire and repeats the names it
// documents; they must be the same.
func TestPublicAPIRepeatsTheWireNames(t *testing.T) {
	for name, pair := range map[string][2]string{
		"managed-by label":   {imv1.LabelManagedBy, wire.LabelManagedBy},
		"restore annotation": {imv1.AnnotationRestored, wire.AnnotationRestore},
	} {
		if pair[0] != pair[1] {
			t.Errorf("%s: operator/api says %q, core/domain/wire %q", name, pair[0], pair[1])
		}
	}
}
