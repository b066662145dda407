// Package v1 contains the public API of the Kyma Infrastructure Manager, group
// infrastructuremanager.kyma-project.io, version v1: the Runtime, GardenerCluster,
// ServiceAccountKubeconfig and DeletionRecord kinds.
//
// This package is the wire contract with the Kyma Environment Broker (KEB) and is imported by other
// teams, so it depends only on apimachinery and Gardener's lean API module (a test checks this).
//
// +kubebuilder:object:generate=true
// +groupName=infrastructuremanager.kyma-project.io
package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "infrastructuremanager.kyma-project.io", Version: "v1"}

	// SchemeBuilder registers the kinds of this package with a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the kinds of this package to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion,
		&Runtime{}, &RuntimeList{},
		&GardenerCluster{}, &GardenerClusterList{},
		&ServiceAccountKubeconfig{}, &ServiceAccountKubeconfigList{},
		&DeletionRecord{}, &DeletionRecordList{},
	)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
