package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/yaml"
)

// The operator in tests, the benchmarks and the sandbox runs with exactly the permissions that ship: in KCP those
// of the OLM bundle's ClusterServiceVersion (generated from the +kubebuilder:rbac markers and config/rbac), in the
// garden those of config/gardener. The admin configs of the test API servers impersonate the operator's
// ServiceAccounts, so a permission missing from what ships fails the test with Forbidden, and a request outside it
// never succeeds by accident. Impersonation lives in the rest.Config, so it composes with anything that changes the
// host or the transport (a fault proxy, the client guard).

// Identity is what the operator connects with: configs that impersonate its KCP and garden ServiceAccounts.
type Identity struct {
	KCP, Garden *rest.Config
}

// Scope says where the operator's permissions are granted: the KCP namespaces (the operator's own first, then the
// watched ones and that of its leader lease; OLM's OwnNamespace/SingleNamespace install modes grant the CSV's
// permissions in each) and the Gardener project namespace.
type Scope struct {
	Namespaces      []string
	GardenNamespace string
}

// Names of what GrantBundleRBAC creates in KCP (OLM would name them after the CSV; what matters is the rules).
const (
	operatorRoleName        = "kim-bundle-permissions"
	operatorClusterRoleName = "kim-bundle-cluster-permissions"
	fieldOwner              = "kim-testenv"
)

// GrantBundleRBAC creates the operator's ServiceAccounts, Roles, ClusterRoles and bindings from the files under
// root (the bundle's CSV and config/gardener) with the admin configs kcp and garden, waits until the API servers
// authorize them, and returns configs that impersonate those ServiceAccounts. It is idempotent: re-granting updates
// the rules to what the files say now.
func GrantBundleRBAC(ctx context.Context, root string, kcp, garden *rest.Config, scope Scope) (Identity, error) {
	if len(scope.Namespaces) == 0 || scope.GardenNamespace == "" {
		return Identity{}, errors.New("grant bundle RBAC: need at least one KCP namespace and the garden namespace")
	}
	kcpAs, err := GrantBundleKCP(ctx, root, kcp, scope.Namespaces)
	if err != nil {
		return Identity{}, fmt.Errorf("grant the bundle's permissions in KCP: %w", err)
	}
	gardenAs, err := grantGarden(ctx, root, garden, scope.GardenNamespace)
	if err != nil {
		return Identity{}, fmt.Errorf("grant config/gardener in the garden: %w", err)
	}
	return Identity{KCP: kcpAs, Garden: gardenAs}, nil
}

// permission is one entry of the CSV's permissions or clusterPermissions.
type permission struct {
	ServiceAccountName string              `json:"serviceAccountName"`
	Rules              []rbacv1.PolicyRule `json:"rules"`
}

type clusterServiceVersion struct {
	Spec struct {
		Install struct {
			Spec struct {
				Permissions        []permission `json:"permissions"`
				ClusterPermissions []permission `json:"clusterPermissions"`
			} `json:"spec"`
		} `json:"install"`
	} `json:"spec"`
}

// BundlePermissions reads the ServiceAccount name and the namespaced and cluster-wide rules of the bundle's CSV.
func BundlePermissions(root string) (sa string, namespaced, clusterWide []rbacv1.PolicyRule, err error) {
	paths, err := filepath.Glob(filepath.Join(root, "bundle", "manifests", "*.clusterserviceversion.yaml"))
	if err != nil {
		return "", nil, nil, fmt.Errorf("find the ClusterServiceVersion under %s: %w", root, err)
	}
	if len(paths) != 1 {
		return "", nil, nil, fmt.Errorf("want one ClusterServiceVersion in %s/bundle/manifests, found %v", root, paths)
	}
	data, err := os.ReadFile(paths[0])
	if err != nil {
		return "", nil, nil, err
	}
	csv := clusterServiceVersion{}
	if err := yaml.Unmarshal(data, &csv); err != nil {
		return "", nil, nil, fmt.Errorf("%s: %w", paths[0], err)
	}
	install := csv.Spec.Install.Spec
	for _, p := range slices.Concat(install.Permissions, install.ClusterPermissions) {
		if sa != "" && p.ServiceAccountName != sa {
			return "", nil, nil, fmt.Errorf("%s: permissions of two ServiceAccounts (%s, %s)", paths[0], sa, p.ServiceAccountName)
		}
		sa = p.ServiceAccountName
	}
	for _, p := range install.Permissions {
		namespaced = append(namespaced, p.Rules...)
	}
	for _, p := range install.ClusterPermissions {
		clusterWide = append(clusterWide, p.Rules...)
	}
	if sa == "" || len(namespaced) == 0 {
		return "", nil, nil, fmt.Errorf("%s: no permissions", paths[0])
	}
	return sa, namespaced, clusterWide, nil
}

// GrantBundleKCP is the KCP half of GrantBundleRBAC, for tests without a garden: the bundle's ServiceAccount in
// namespaces[0] with the CSV's permissions in each of namespaces and its cluster permissions; it returns admin
// impersonating that ServiceAccount.
func GrantBundleKCP(ctx context.Context, root string, admin *rest.Config, namespaces []string) (*rest.Config, error) {
	if len(namespaces) == 0 {
		return nil, errors.New("grant the bundle's permissions: no namespace")
	}
	sa, namespaced, clusterWide, err := BundlePermissions(root)
	if err != nil {
		return nil, err
	}
	own := namespaces[0]
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: own}}
	objs := []client.Object{&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ServiceAccount",
		"metadata": map[string]any{"name": sa, "namespace": own}}}}
	seen := map[string]bool{}
	for _, ns := range namespaces {
		if seen[ns] {
			continue
		}
		seen[ns] = true
		meta := metaOf(operatorRoleName, ns)
		objs = append(objs, &rbacv1.Role{ObjectMeta: meta, Rules: namespaced},
			&rbacv1.RoleBinding{ObjectMeta: meta, Subjects: subject,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: operatorRoleName}})
	}
	if len(clusterWide) > 0 {
		// One per operator namespace: operators of other namespaces in the same KCP keep theirs.
		meta := metaOf(operatorClusterRoleName+"-"+own, "")
		objs = append(objs, &rbacv1.ClusterRole{ObjectMeta: meta, Rules: clusterWide},
			&rbacv1.ClusterRoleBinding{ObjectMeta: meta, Subjects: subject,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: meta.Name}})
	}
	return grant(ctx, admin, objs, own, sa)
}

// GrantGarden is the garden half of GrantBundleRBAC, for an operator whose KCP side someone else installs (OLM):
// config/gardener applied for the project namespace ns. It returns garden impersonating the operator's garden
// ServiceAccount; the ServiceAccount's namespace and name are in the impersonated user name.
func GrantGarden(ctx context.Context, root string, garden *rest.Config, ns string) (*rest.Config, error) {
	return grantGarden(ctx, root, garden, ns)
}

// gardenFiles are the files of config/gardener's kustomization, in its order.
var gardenFiles = []string{"service_account.yaml", "role.yaml", "role_binding.yaml", "admission_policy.yaml"}

// grantGarden applies config/gardener as its kustomization would for the project namespace ns (the admission
// policies too: they are cluster-scoped and match the ServiceAccount of whatever namespace it is in).
func grantGarden(ctx context.Context, root string, admin *rest.Config, ns string) (*rest.Config, error) {
	var objs []client.Object
	sa := ""
	for _, file := range gardenFiles {
		docs, err := readManifest(filepath.Join(root, "config", "gardener", file))
		if err != nil {
			return nil, err
		}
		for _, u := range docs {
			if u.GetNamespace() != "" {
				u.SetNamespace(ns)
			}
			if subjects, ok, _ := unstructured.NestedSlice(u.Object, "subjects"); ok {
				for _, s := range subjects {
					if m, ok := s.(map[string]any); ok && m["namespace"] != nil {
						m["namespace"] = ns
					}
				}
				_ = unstructured.SetNestedSlice(u.Object, subjects, "subjects")
			}
			if u.GetKind() == "ServiceAccount" {
				sa = u.GetName()
			}
			objs = append(objs, u)
		}
	}
	if sa == "" {
		return nil, errors.New("config/gardener/service_account.yaml has no ServiceAccount")
	}
	return grant(ctx, admin, objs, ns, sa)
}

// grant applies objs as admin, waits until every Role and ClusterRole in them is in force for the ServiceAccount
// ns/sa, and returns admin impersonating it. Waiting matters: an aggregated API server (gardener-apiserver) caches
// a denial for a while, so a request made before RBAC caught up would fail for seconds after it did.
func grant(ctx context.Context, admin *rest.Config, objs []client.Object, ns, sa string) (*rest.Config, error) {
	c, err := client.New(admin, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return nil, err
	}
	var probes []authorizationv1.ResourceAttributes
	for _, o := range objs {
		u, err := toUnstructured(o)
		if err != nil {
			return nil, err
		}
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
			return nil, fmt.Errorf("apply %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
		probes = append(probes, probesOf(u)...)
	}
	user := serviceaccount.MakeUsername(ns, sa)
	groups := append(serviceaccount.MakeGroupNames(ns), "system:authenticated")
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		for _, attrs := range probes {
			review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: user, Groups: groups, ResourceAttributes: &attrs}}
			if err := c.Create(ctx, review); err != nil {
				return false, err
			}
			if !review.Status.Allowed {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("the permissions of %s are not in force: %w", user, err)
	}
	cfg := rest.CopyConfig(admin)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	return cfg, nil
}

// probesOf is one request each rule of a Role or ClusterRole allows (in the Role's namespace).
func probesOf(u *unstructured.Unstructured) []authorizationv1.ResourceAttributes {
	if u.GetKind() != "Role" && u.GetKind() != "ClusterRole" {
		return nil
	}
	role := &rbacv1.ClusterRole{} // a Role has the same rules
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, role); err != nil {
		return nil
	}
	var out []authorizationv1.ResourceAttributes
	for _, r := range role.Rules {
		if len(r.APIGroups) == 0 || len(r.Resources) == 0 || len(r.Verbs) == 0 || len(r.ResourceNames) > 0 {
			continue
		}
		res, sub, _ := strings.Cut(r.Resources[0], "/")
		out = append(out, authorizationv1.ResourceAttributes{Namespace: u.GetNamespace(), Group: r.APIGroups[0],
			Resource: res, Subresource: sub, Verb: r.Verbs[0]})
	}
	return out
}

func metaOf(name, ns string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: ns} }

// toUnstructured converts a typed object (with its kind from the client-go scheme) for a server-side apply.
func toUnstructured(o client.Object) (*unstructured.Unstructured, error) {
	if u, ok := o.(*unstructured.Unstructured); ok {
		return u, nil
	}
	gvk, err := apiutil.GVKForObject(o, scheme.Scheme)
	if err != nil {
		return nil, err
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return u, nil
}

// readManifest reads the documents of a YAML file.
func readManifest(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(string(data), "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
	return out, nil
}
