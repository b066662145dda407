package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/lib/version"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kyma-project/kim/operator/manifests"
)

// Input says what to generate the bundle from.
type Input struct {
	// ManifestsDir is the kustomization rendering the CSV base, the operator's objects, samples and scorecard config.
	ManifestsDir string
	// Version is the bundle's semantic version (CSV spec.version, name <package>.v<version>).
	Version string
	// Image is the manager image; it replaces the image of the container named "manager".
	Image string
	// Package, Channels and DefaultChannel go to bundle/metadata/annotations.yaml and the Dockerfile labels.
	Package        string
	Channels       []string
	DefaultChannel string
}

// managerContainer is the container whose image the bundle sets and lists in relatedImages.
const managerContainer = "manager"

// objects are the rendered manifests sorted by what the bundle does with them.
type objects struct {
	csvBase      *unstructured.Unstructured
	crds         []*apiextensionsv1.CustomResourceDefinition
	deployments  []*appsv1.Deployment
	rbac         []*unstructured.Unstructured // Roles, ClusterRoles and their bindings
	samples      []*unstructured.Unstructured
	scorecard    *unstructured.Unstructured
	serviceAccts []*unstructured.Unstructured
	others       []*unstructured.Unstructured
}

// bundleKinds are the kinds OLM's registry+v1 format installs next to the CSV (operator-registry
// pkg/lib/bundle/supported_resources.go); anything else in config/ is an error rather than being silently dropped
// or breaking the install. Istio's AuthorizationPolicy and lifecycle-manager's Watcher are not among them: they
// ship in config/watcher only.
var bundleKinds = map[string]bool{
	"Service": true, "ConfigMap": true, "Secret": true, "ServiceMonitor": true, "PrometheusRule": true,
	"PodDisruptionBudget": true, "PriorityClass": true, "VerticalPodAutoscaler": true, "ConsoleYAMLSample": true,
	"Role": true, "RoleBinding": true, "ClusterRole": true, "ClusterRoleBinding": true, "ServiceAccount": true,
	"NetworkPolicy": true,
}

// Generate renders the manifests and assembles the bundle in memory.
func Generate(in Input) (*Bundle, error) {
	if _, err := semver.Parse(in.Version); err != nil {
		return nil, fmt.Errorf("version %q: %w", in.Version, err)
	}
	if in.Package == "" || in.Image == "" || len(in.Channels) == 0 || in.DefaultChannel == "" {
		return nil, errors.New("package, image, channels and default channel must be set")
	}
	rendered, err := manifests.Render(in.ManifestsDir)
	if err != nil {
		return nil, err
	}
	objs, err := classify(rendered)
	if err != nil {
		return nil, err
	}
	deployments, serviceAccounts, err := deploymentSpecs(in.Image, objs.deployments)
	if err != nil {
		return nil, err
	}
	perms, err := permissionsFor(serviceAccounts, objs.rbac)
	if err != nil {
		return nil, err
	}
	csv, err := buildCSV(in, objs, deployments, perms)
	if err != nil {
		return nil, err
	}
	return assemble(in, csv, objs, serviceAccounts, perms)
}

func classify(rendered []*unstructured.Unstructured) (*objects, error) {
	o := &objects{}
	ownedKinds := map[string]bool{} // group/kind of the CRDs
	for _, u := range rendered {
		if u.GetKind() == "CustomResourceDefinition" {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := fromUnstructured(u, crd); err != nil {
				return nil, err
			}
			o.crds = append(o.crds, crd)
			ownedKinds[crd.Spec.Group+"/"+crd.Spec.Names.Kind] = true
		}
	}
	for _, u := range rendered {
		gvk := u.GroupVersionKind()
		switch {
		case gvk.Kind == "CustomResourceDefinition", gvk.Kind == "Namespace":
			// CRDs are handled above; OLM installs into the namespace the user chose.
		case gvk.Kind == "ClusterServiceVersion":
			if o.csvBase != nil {
				return nil, errors.New("more than one ClusterServiceVersion base in the manifests")
			}
			o.csvBase = u
		case gvk.Kind == "Configuration" && gvk.Group == "scorecard.operatorframework.io":
			o.scorecard = u
		case gvk.Kind == "Deployment":
			d := &appsv1.Deployment{}
			if err := fromUnstructured(u, d); err != nil {
				return nil, err
			}
			o.deployments = append(o.deployments, d)
		case ownedKinds[gvk.Group+"/"+gvk.Kind]:
			o.samples = append(o.samples, u)
		case gvk.Group == "rbac.authorization.k8s.io":
			o.rbac = append(o.rbac, u)
		case gvk.Kind == "ServiceAccount":
			o.serviceAccts = append(o.serviceAccts, u)
		case bundleKinds[gvk.Kind]:
			o.others = append(o.others, u)
		default:
			return nil, fmt.Errorf("%s %s: kind %s cannot be part of an OLM bundle; remove it from config/manifests",
				gvk.Kind, u.GetName(), gvk.GroupKind())
		}
	}
	switch {
	case o.csvBase == nil:
		return nil, errors.New("no ClusterServiceVersion base in the manifests (config/manifests/bases)")
	case len(o.deployments) == 0:
		return nil, errors.New("no Deployment in the manifests")
	case len(o.crds) == 0:
		return nil, errors.New("no CustomResourceDefinition in the manifests")
	}
	return o, nil
}

func buildCSV(in Input, objs *objects, deployments []operatorsv1alpha1.StrategyDeploymentSpec, perms *permissions) (*operatorsv1alpha1.ClusterServiceVersion, error) {
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	if err := fromUnstructured(objs.csvBase, csv); err != nil {
		return nil, err
	}
	csv.Name = in.Package + ".v" + in.Version
	csv.Namespace = ""
	csv.Spec.Version = version.OperatorVersion{Version: semver.MustParse(in.Version)}
	examples, err := json.MarshalIndent(sampleList(objs.samples), "", "  ")
	if err != nil {
		return nil, fmt.Errorf("alm-examples: %w", err)
	}
	if csv.Annotations == nil {
		csv.Annotations = map[string]string{}
	}
	csv.Annotations["alm-examples"] = string(examples)
	csv.Annotations["containerImage"] = in.Image
	csv.Annotations["operators.operatorframework.io/builder"] = builder
	csv.Annotations["operators.operatorframework.io/project_layout"] = projectLayout

	csv.Spec.InstallStrategy = operatorsv1alpha1.NamedInstallStrategy{
		StrategyName: operatorsv1alpha1.InstallStrategyNameDeployment,
		StrategySpec: operatorsv1alpha1.StrategyDetailsDeployment{
			DeploymentSpecs:    deployments,
			Permissions:        perms.namespaced,
			ClusterPermissions: perms.cluster,
		},
	}
	csv.Spec.RelatedImages = []operatorsv1alpha1.RelatedImage{{Name: managerContainer, Image: in.Image}}
	owned, err := ownedCRDs(csv.Spec.CustomResourceDefinitions.Owned, objs.crds)
	if err != nil {
		return nil, err
	}
	csv.Spec.CustomResourceDefinitions.Owned = owned
	if err := checkMinKubeVersion(csv.Spec.MinKubeVersion, objs.crds); err != nil {
		return nil, err
	}
	return csv, nil
}

// sampleList keeps only what a user would write: no server-set or kustomize bookkeeping fields.
func sampleList(samples []*unstructured.Unstructured) []map[string]any {
	out := make([]map[string]any, 0, len(samples))
	for _, s := range samples {
		c := s.DeepCopy()
		unstructured.RemoveNestedField(c.Object, "status")
		unstructured.RemoveNestedField(c.Object, "metadata", "creationTimestamp")
		out = append(out, c.Object)
	}
	sort.SliceStable(out, func(i, j int) bool {
		return fmt.Sprint(out[i]["kind"]) < fmt.Sprint(out[j]["kind"])
	})
	return out
}

// deploymentSpecs turns the Deployments into CSV deployment specs with the manager image set, and returns the
// service accounts they run as (OLM creates those and grants them the CSV's permissions).
func deploymentSpecs(image string, deployments []*appsv1.Deployment) ([]operatorsv1alpha1.StrategyDeploymentSpec, []string, error) {
	var specs []operatorsv1alpha1.StrategyDeploymentSpec
	var sas []string
	foundManager := false
	for _, d := range deployments {
		spec := *d.Spec.DeepCopy()
		for i := range spec.Template.Spec.Containers {
			if spec.Template.Spec.Containers[i].Name == managerContainer {
				spec.Template.Spec.Containers[i].Image = image
				foundManager = true
			}
		}
		sa := spec.Template.Spec.ServiceAccountName
		if sa == "" {
			return nil, nil, fmt.Errorf("deployment %s: set spec.template.spec.serviceAccountName; OLM grants permissions to it", d.Name)
		}
		sas = append(sas, sa)
		specs = append(specs, operatorsv1alpha1.StrategyDeploymentSpec{Name: d.Name, Label: d.Labels, Spec: spec})
	}
	if !foundManager {
		return nil, nil, fmt.Errorf("no container named %q in the deployments", managerContainer)
	}
	return specs, sas, nil
}
