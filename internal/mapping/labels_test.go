package mapping

import (
	"testing"

	"github.com/kyma-project/kim/core/domain/migration"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// The domain cannot import the API module (the hexagon), so KEB's label keys are written twice; they must agree.
func TestMigrationLabelsAreTheAPIs(t *testing.T) {
	for _, l := range []struct{ domain, api string }{
		{migration.LabelInstanceID, imv1.LabelInstanceID}, {migration.LabelRuntimeID, imv1.LabelRuntimeID},
		{migration.LabelBrokerPlanID, imv1.LabelBrokerPlanID}, {migration.LabelBrokerPlanName, imv1.LabelBrokerPlanName},
		{migration.LabelGlobalAccountID, imv1.LabelGlobalAccountID}, {migration.LabelSubaccountID, imv1.LabelSubaccountID},
		{migration.LabelShootName, imv1.LabelShootName}, {migration.LabelRegion, imv1.LabelRegion},
		{migration.LabelProvider, imv1.LabelProvider}, {migration.LabelPlatformRegion, imv1.LabelPlatformRegion},
		{migration.LabelKymaName, imv1.LabelKymaName},
	} {
		if l.domain != l.api {
			t.Errorf("domain label %q, API label %q", l.domain, l.api)
		}
	}
}
