package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DeletionRecord is the operator's own record of a Runtime's deletion, written when it let the Runtime go and
// named after the Runtime's shoot. The deletion record on the shoot (annotations in the garden) can be edited by
// anyone who can write the shoots of the Gardener project; the reaper deletes a shoot only when this record names
// the same runtime and the same shoot object (UID), and never before the later of both due times. Only the
// operator writes DeletionRecords; people read them (`kubectl get deletionrecords -n kcp-system`) and, to let a
// shoot the reaper keeps for want of one go (docs/deletion.md), create one by hand after checking the deletion.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=kimdr,categories=kim
// +kubebuilder:printcolumn:name="Runtime",type=string,JSONPath=`.spec.runtimeID`
// +kubebuilder:printcolumn:name="Shoot-UID",type=string,JSONPath=`.spec.shootUID`
// +kubebuilder:printcolumn:name="Due",type=date,JSONPath=`.spec.dueAt`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type DeletionRecord struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the recorded deletion.
	Spec DeletionRecordSpec `json:"spec"`
}

// DeletionRecordList is a list of DeletionRecords.
//
// +kubebuilder:object:root=true
type DeletionRecordList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []DeletionRecord `json:"items"`
}

// DeletionRecordSpec is one deletion: which runtime, which shoot object, since when and until when it is kept.
//
// +kubebuilder:validation:XValidation:rule="self.dueAt >= self.markedAt",message="spec.dueAt must not be before spec.markedAt"
type DeletionRecordSpec struct {
	// RuntimeID is the deleted Runtime (its name in this namespace).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	RuntimeID string `json:"runtimeID"`
	// ShootUID is the UID of the shoot object (metadata.name of this record is its name): a shoot created again
	// under the name is not covered.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	ShootUID string `json:"shootUID"`
	// MarkedAt is when the operator let the Runtime go.
	// +kubebuilder:validation:Format=date-time
	MarkedAt metav1.Time `json:"markedAt"`
	// DueAt is the earliest moment the shoot may be deleted.
	// +kubebuilder:validation:Format=date-time
	DueAt metav1.Time `json:"dueAt"`
	// CredentialsBinding is the Gardener CredentialsBinding the Runtime named (spec.shoot.secretBindingName).
	// +optional
	// +kubebuilder:validation:MaxLength=253
	CredentialsBinding string `json:"credentialsBinding,omitempty"`
	// BindingRelease is what the operator did to that binding for this deletion: Releasing (about to label it
	// dirty), Released (labelled it dirty, or found the label it set for a sibling's deletion and holds it too),
	// FoundDirty (someone else had), NotReleased (gave up labelling it), Returned (after the hold a live sibling
	// named the binding, so its label came off; or it was gone), Kept (after the hold no live sibling named it;
	// the label stays until the shoot is gone).
	// A restore removes a dirty label only when it is Releasing, Released or Kept, and no other deletion holding
	// it is within its hold.
	// +optional
	// +kubebuilder:validation:Enum=Releasing;Released;FoundDirty;NotReleased;Returned;Kept
	BindingRelease string `json:"bindingRelease,omitempty"`
}
