package kube

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/registrycache"
)

// KymaGVK is lifecycle-manager's Kyma resource (operator.kyma-project.io/v1beta2). The one in the runtime,
// kyma-system/default, holds the customer's module choice in spec.modules[].name.
var KymaGVK = schema.GroupVersionKind{Group: "operator.kyma-project.io", Version: "v1beta2", Kind: "Kyma"}

// KymaCRDName is the name of the Kyma CRD lifecycle-manager installs in runtimes.
const KymaCRDName = "kymas.operator.kyma-project.io"

// crdGVK is the CustomResourceDefinition kind, read as metadata only.
var crdGVK = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// RegistryCacheModule is the module name in Kyma's spec.modules.
const RegistryCacheModule = registrycache.ModuleName

// ModuleEnabled implements ports.RegistryCacheSource: the Kyma CRD is read as metadata only (a missing CRD is a
// runtime without lifecycle-manager's modules: disabled), then the Kyma resource kyma-system/default, whose every
// failure (NotFound too) is an error. Both responses count against Limits.MaxListBytes on the wire (the customer
// controls the Kyma resource's size), each request against RuntimeRequestTimeout.
func (s *RegistryCacheSource) ModuleEnabled(ctx context.Context, runtimeID string) (bool, error) {
	c, err := s.Clients(ctx, runtimeID)
	if err != nil {
		return false, err
	}
	lim := s.Limits.OrDefaults()
	budget := &responseBudget{max: lim.MaxListBytes}
	ctx = withResponseBudget(ctx, budget)
	crd := &metav1.PartialObjectMetadata{}
	crd.SetGroupVersionKind(crdGVK)
	err = c.Get(ctx, client.ObjectKey{Name: KymaCRDName}, crd)
	switch {
	case errors.Is(err, errResponseBudget):
		return false, lim.KymaTooLarge()
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, runtimeError("get CustomResourceDefinition "+KymaCRDName, runtimeID, err)
	}
	k := &unstructured.Unstructured{}
	k.SetGroupVersionKind(KymaGVK)
	err = c.Get(ctx, client.ObjectKey{Namespace: registrycache.KymaNamespace, Name: registrycache.KymaName}, k)
	switch {
	case errors.Is(err, errResponseBudget):
		return false, lim.KymaTooLarge()
	case err != nil:
		// NotFound included: lifecycle-manager creates the resource right after its CRD, and reading the gap as
		// "disabled" would take the customer's caches away.
		return false, runtimeError(fmt.Sprintf("get Kyma %s/%s", registrycache.KymaNamespace, registrycache.KymaName), runtimeID, err)
	}
	if !budget.counted() {
		// A client without budgetTransport: the bound holds on what was decoded instead.
		budget.add(approxJSONSize(k.Object))
	}
	if budget.exceeded() {
		return false, lim.KymaTooLarge()
	}
	modules, _, _ := unstructured.NestedSlice(k.Object, "spec", "modules")
	for _, m := range modules {
		if mm, ok := m.(map[string]any); ok && mm["name"] == registrycache.ModuleName {
			return true, nil
		}
	}
	return false, nil
}
