package migration

import (
	"fmt"
	"slices"
	"strings"
)

// Labels KEB sets on its Kyma resources, Runtimes and GardenerClusters (docs/keb-contract.md).
const (
	LabelInstanceID      = "kyma-project.io/instance-id"
	LabelRuntimeID       = "kyma-project.io/runtime-id"
	LabelBrokerPlanID    = "kyma-project.io/broker-plan-id"
	LabelBrokerPlanName  = "kyma-project.io/broker-plan-name"
	LabelGlobalAccountID = "kyma-project.io/global-account-id"
	LabelSubaccountID    = "kyma-project.io/subaccount-id"
	LabelShootName       = "kyma-project.io/shoot-name"
	LabelRegion          = "kyma-project.io/region"
	LabelProvider        = "kyma-project.io/provider"
	LabelPlatformRegion  = "kyma-project.io/platform-region"
	LabelKymaName        = "operator.kyma-project.io/kyma-name"
)

// RequiredLabels are the KEB labels without which a runtime is not migrated: they identify the runtime and its
// shoot (runtime-id, shoot-name), and the operator or KEB act on the others (the plan decides the deletion window,
// the accounts go to the shoot's labels, the instance ties the runtime to its service instance).
var RequiredLabels = []string{LabelInstanceID, LabelRuntimeID, LabelBrokerPlanID, LabelBrokerPlanName,
	LabelGlobalAccountID, LabelSubaccountID, LabelShootName}

// CheckLabels returns the required KEB labels that are missing or empty, sorted; nil when all are there.
func CheckLabels(labels map[string]string) []string {
	var missing []string
	for _, k := range RequiredLabels {
		if strings.TrimSpace(labels[k]) == "" {
			missing = append(missing, k)
		}
	}
	slices.Sort(missing)
	return missing
}

// missingLabelsProblem describes missing labels for the report.
func missingLabelsProblem(kind, key string, missing []string) Problem {
	return Problem{Reason: ReasonLabelsMissing, Message: fmt.Sprintf("%s %s lacks the KEB labels %s; KEB sets them on every runtime "+
		"(docs/keb-contract.md): add them or leave the runtime to be migrated by hand", kind, key, strings.Join(missing, ", "))}
}
