package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GardenerClusterState is the coarse state of a GardenerCluster.
type GardenerClusterState string

const (
	// GardenerClusterStatePending means no kubeconfig was written yet.
	GardenerClusterStatePending GardenerClusterState = "Pending"
	// GardenerClusterStateReady means the Secret holds a valid kubeconfig.
	GardenerClusterStateReady GardenerClusterState = "Ready"
	// GardenerClusterStateError means the last attempt to issue or write a kubeconfig failed; see the conditions.
	GardenerClusterStateError GardenerClusterState = "Error"
	// GardenerClusterStateDeleting means the kubeconfig Secret is being removed.
	GardenerClusterStateDeleting GardenerClusterState = "Deleting"
)

// GardenerCluster keeps a Secret filled with a short-lived admin kubeconfig of a Gardener shoot. It is named by the
// runtime ID; the operator rotates the kubeconfig before it expires, on demand (annotation
// operator.kyma-project.io/force-kubeconfig-rotation: "true"), and deletes the Secret with the GardenerCluster.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=gc,categories=kim
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="Shoot",type=string,JSONPath=`.spec.shoot.name`
// +kubebuilder:printcolumn:name="Secret",type=string,JSONPath=`.spec.kubeconfig.secret.name`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1,description="Reason of the Ready condition"
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1,description="Message of the Ready condition"
type GardenerCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec names the shoot and the Secret to keep.
	Spec GardenerClusterSpec `json:"spec"`
	// Status reports the kubeconfig management. It reads as observedGeneration 0 before the operator wrote it (a
	// default on read), so kstatus sees a GardenerCluster nobody has looked at yet as in progress, not current.
	// +optional
	// +kubebuilder:default={observedGeneration: 0}
	Status GardenerClusterStatus `json:"status,omitempty"`
}

// GardenerClusterList is a list of GardenerClusters.
//
// +kubebuilder:object:root=true
type GardenerClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []GardenerCluster `json:"items"`
}

// GardenerClusterSpec names the shoot whose kubeconfig is managed and the Secret that holds it.
type GardenerClusterSpec struct {
	// Kubeconfig says where the kubeconfig is kept.
	Kubeconfig Kubeconfig `json:"kubeconfig"`
	// Shoot names the Gardener shoot.
	Shoot Shoot `json:"shoot"`
}

// Shoot names a Gardener shoot in the operator's garden project.
type Shoot struct {
	// Name of the shoot.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
}

// Kubeconfig says where a kubeconfig is kept.
type Kubeconfig struct {
	// Secret is the Secret that holds the kubeconfig.
	Secret Secret `json:"secret"`
}

// Secret locates a key in a Secret.
type Secret struct {
	// Name of the Secret, typically kubeconfig-<runtimeID>.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	Name string `json:"name"`
	// Namespace of the Secret, typically kcp-system.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace"`
	// Key under which the kubeconfig is stored, typically config.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	Key string `json:"key"`
}

// GardenerClusterStatus reports the kubeconfig management of a GardenerCluster.
type GardenerClusterStatus struct {
	// State is Ready when the Secret holds a valid kubeconfig.
	// +optional
	// +kubebuilder:validation:Enum=Pending;Ready;Error;Deleting
	State GardenerClusterState `json:"state,omitempty"`
	// Conditions explain the state: KubeconfigManagement carries a stable reason for the last kubeconfig operation,
	// Ready (the kstatus convention, so `kubectl wait --for=condition=Ready` works) is True while the Secret holds a
	// valid kubeconfig and otherwise repeats KubeconfigManagement's reason and message.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ObservedGeneration is the generation of the spec the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}
