package kube

import (
	"context"
	"encoding/base64"
	"fmt"
	"maps"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kyma-project/kim/core/domain/runtimeconfig"
)

// OpenIDConnectResource is the resource of OpenIDConnect objects (authentication.gardener.cloud/v1alpha1,
// cluster-scoped), served in a runtime by the shoot-oidc-service extension. The dynamic client needs no
// discovery for it, and a runtime without the CRD answers NotFound.
var OpenIDConnectResource = schema.GroupVersionResource{Group: "authentication.gardener.cloud", Version: "v1alpha1", Resource: "openidconnects"}

func configureOIDC(ctx context.Context, c *runtimeClient, d runtimeconfig.Desired) runtimeconfig.Outcome {
	if !d.ManageOIDC {
		return runtimeconfig.Outcome{Done: true, Skipped: true, Reason: runtimeconfig.ReasonOidcAndConfigMapsConfigured,
			Message: "The cluster has no shoot-oidc-service: no OpenIDConnect resources to keep."}
	}
	api := c.dynamic.Resource(OpenIDConnectResource)
	list, err := api.List(ctx, metav1.ListOptions{LabelSelector: runtimeconfig.LabelOIDCManagedBy + "=" + runtimeconfig.ManagedByValue})
	if apierrors.IsNotFound(err) {
		return runtimeconfig.Failed(runtimeconfig.ReasonOIDCNotServed,
			"The runtime does not serve OpenIDConnect resources (yet): shoot-oidc-service has not installed its CRD.")
	}
	if err != nil {
		return outcome(err, runtimeconfig.ReasonOidcError, "list OpenIDConnect resources")
	}
	observed := make([]runtimeconfig.ObservedOIDC, 0, len(list.Items))
	for i := range list.Items {
		observed = append(observed, ObserveOIDC(&list.Items[i]))
	}
	plan := runtimeconfig.PlanOIDC(observed, d.OIDC)
	for _, r := range plan.Apply {
		if _, err := api.Apply(ctx, r.Name, OIDCObject(r), applyOptions()); err != nil {
			return outcome(err, runtimeconfig.ReasonOidcError, "apply OpenIDConnect "+r.Name)
		}
	}
	for _, name := range plan.Delete {
		if err := api.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return outcome(err, runtimeconfig.ReasonOidcError, "delete OpenIDConnect "+name)
		}
	}
	return runtimeconfig.Done(runtimeconfig.ReasonOidcAndConfigMapsConfigured, fmt.Sprintf("%d OpenIDConnect resources are configured.", len(d.OIDC)))
}

// OIDCObject is the OpenIDConnect object of r, labelled as the operator's. caBundle and jwks.keys are bytes in the
// API: base64 on the wire.
func OIDCObject(r runtimeconfig.OIDCResource) *unstructured.Unstructured {
	spec := map[string]any{"issuerURL": r.IssuerURL, "clientID": r.ClientID, "usernameClaim": r.UsernameClaim}
	if r.UsernamePrefix != nil {
		spec["usernamePrefix"] = *r.UsernamePrefix
	}
	if r.GroupsClaim != "" {
		spec["groupsClaim"] = r.GroupsClaim
	}
	if r.GroupsPrefix != nil {
		spec["groupsPrefix"] = *r.GroupsPrefix
	}
	if r.CABundle != "" {
		spec["caBundle"] = base64.StdEncoding.EncodeToString([]byte(r.CABundle))
	}
	if len(r.SupportedSigningAlgs) > 0 {
		algs := make([]any, len(r.SupportedSigningAlgs))
		for i, a := range r.SupportedSigningAlgs {
			algs[i] = a
		}
		spec["supportedSigningAlgs"] = algs
	}
	if len(r.RequiredClaims) > 0 {
		claims := map[string]any{}
		for k, v := range r.RequiredClaims {
			claims[k] = v
		}
		spec["requiredClaims"] = claims
	}
	if len(r.JWKS) > 0 {
		spec["jwks"] = map[string]any{"keys": base64.StdEncoding.EncodeToString(r.JWKS)}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": OpenIDConnectResource.GroupVersion().String(), "kind": "OpenIDConnect",
		"metadata": map[string]any{"name": r.Name, "labels": map[string]any{runtimeconfig.LabelOIDCManagedBy: runtimeconfig.ManagedByValue}},
		"spec":     spec,
	}}
}

// ObserveOIDC reads an OpenIDConnect object into the domain's terms; fields that do not decode read as unset, so
// the object is written again.
func ObserveOIDC(u *unstructured.Unstructured) runtimeconfig.ObservedOIDC {
	str := func(fields ...string) string {
		v, _, _ := unstructured.NestedString(u.Object, append([]string{"spec"}, fields...)...)
		return v
	}
	ptr := func(field string) *string {
		v, found, _ := unstructured.NestedString(u.Object, "spec", field)
		if !found {
			return nil
		}
		return &v
	}
	bytesOf := func(fields ...string) []byte {
		b, err := base64.StdEncoding.DecodeString(str(fields...))
		if err != nil || len(b) == 0 {
			return nil
		}
		return b
	}
	r := runtimeconfig.OIDCResource{Name: u.GetName(), IssuerURL: str("issuerURL"), ClientID: str("clientID"),
		UsernameClaim: str("usernameClaim"), UsernamePrefix: ptr("usernamePrefix"), GroupsClaim: str("groupsClaim"),
		GroupsPrefix: ptr("groupsPrefix"), CABundle: string(bytesOf("caBundle")), JWKS: bytesOf("jwks", "keys")}
	r.SupportedSigningAlgs, _, _ = unstructured.NestedStringSlice(u.Object, "spec", "supportedSigningAlgs")
	if claims, found, _ := unstructured.NestedStringMap(u.Object, "spec", "requiredClaims"); found && len(claims) > 0 {
		r.RequiredClaims = maps.Clone(claims)
	}
	return runtimeconfig.ObservedOIDC{OIDCResource: r,
		Managed: u.GetLabels()[runtimeconfig.LabelOIDCManagedBy] == runtimeconfig.ManagedByValue}
}
