package skeleton

import (
	"encoding/json"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// The status patch is the status part of client.MergeFrom's patch (what the /status endpoint takes of it) for
// additions, changes and removals, and holds nothing else, whatever else of the object changed.
func TestStatusPatchIsTheMergePatchOfTheStatus(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC))
	base := func() *imv1.Runtime {
		rt := &imv1.Runtime{ObjectMeta: metav1.ObjectMeta{Name: "rt-1", Namespace: "kcp-system", Labels: map[string]string{"a": "b"}}}
		rt.Spec.Shoot.Name = "c-1"
		rt.Status = imv1.RuntimeStatus{State: "Pending", ObservedGeneration: 1,
			Conditions:         []metav1.Condition{{Type: "Ready", Status: "False", Reason: "Creating", LastTransitionTime: at}},
			ShootLastOperation: &gardencorev1beta1.LastOperation{Type: "Create", State: "Processing", Progress: 40, LastUpdateTime: at},
			ShootLastErrors:    []gardencorev1beta1.LastError{{Description: "quota"}}}
		return rt
	}
	for name, change := range map[string]func(*imv1.Runtime){
		"a new report of Gardener": func(rt *imv1.Runtime) {
			rt.Status.ShootLastOperation.LastUpdateTime = metav1.NewTime(at.Add(time.Minute))
			rt.Status.ShootLastOperation.Description = "Shoot cluster has been successfully reconciled."
		},
		"fields cleared and added": func(rt *imv1.Runtime) {
			rt.Status.ShootLastErrors, rt.Status.ShootLastOperation = nil, nil
			rt.Status.State, rt.Status.ProvisioningCompleted = "Ready", true
			rt.Status.Conditions = append(rt.Status.Conditions, metav1.Condition{Type: "Configured", Status: "True", Reason: "Done", LastTransitionTime: at})
			rt.Status.RuntimeConfiguration = &imv1.RuntimeConfigurationStatus{Hash: "h1"}
		},
		"the spec and labels changed too": func(rt *imv1.Runtime) {
			rt.Spec.Shoot.Name, rt.Labels = "c-2", nil
			rt.Status.ObservedGeneration = 2
		},
	} {
		before := base()
		after := before.DeepCopy()
		change(after)
		want, err := client.MergeFrom(before).Data(after)
		if err != nil {
			t.Fatal(err)
		}
		got, err := statusMergeFrom{before: before}.Data(after)
		if err != nil {
			t.Fatal(err)
		}
		var w, g map[string]any
		if err := json.Unmarshal(want, &w); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[string]any{"status": w["status"]}, g); diff != "" {
			t.Errorf("%s: status patch (-status of the whole object's merge patch +got):\n%s", name, diff)
		}
	}
}
