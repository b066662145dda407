// Package probeconfig reads what config/probe ships for the end-to-end probe's identity (its ServiceAccount, Role,
// RoleBinding and ValidatingAdmissionPolicy with binding) as `kubectl kustomize config/probe` renders them, and the
// CronJob's arguments, so that the probe's integration test runs with exactly the shipped permissions.
//
// It does not run kustomize: the kustomize engine imports Go's plugin package, and a test binary that also links
// cgo code built without -fPIE (the garden-in-a-box's dependencies do) then fails to link. It applies the only
// transformations the kustomization makes to these objects (namespace, namePrefix and the references to prefixed
// names, labels); TestProbeManifests (operator/manifests) fails when the result differs from kustomize's.
package probeconfig

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Config is config/probe's identity and the CronJob's arguments.
type Config struct {
	// Objects are the ServiceAccount, Role, RoleBinding, ValidatingAdmissionPolicy and its binding, rendered.
	Objects []*unstructured.Unstructured
	// Namespace and ServiceAccount name the probe's ServiceAccount.
	Namespace, ServiceAccount string
	// Args are the probe container's arguments in the CronJob.
	Args []string
}

// kustomization is the part of config/probe/kustomization.yaml this package applies.
type kustomization struct {
	Namespace  string   `json:"namespace"`
	NamePrefix string   `json:"namePrefix"`
	Resources  []string `json:"resources"`
	Labels     []struct {
		Pairs map[string]string `json:"pairs"`
	} `json:"labels"`
}

// clusterScoped are the kinds in config/probe without a namespace.
var clusterScoped = map[string]bool{"ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true}

// Read reads config/probe under the repository root.
func Read(root string) (Config, error) {
	dir := filepath.Join(root, "config", "probe")
	raw, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		return Config{}, err
	}
	var k kustomization
	if err := yaml.Unmarshal(raw, &k); err != nil {
		return Config{}, fmt.Errorf("config/probe/kustomization.yaml: %w", err)
	}
	cfg := Config{Namespace: k.Namespace}
	for _, file := range k.Resources {
		docs, err := readManifest(filepath.Join(dir, file))
		if err != nil {
			return Config{}, err
		}
		for _, u := range docs {
			if u.GetKind() == "CronJob" {
				if cfg.Args, err = containerArgs(u); err != nil {
					return Config{}, fmt.Errorf("%s: %w", file, err)
				}
				continue
			}
			if err := k.transform(u); err != nil {
				return Config{}, fmt.Errorf("%s: %w", file, err)
			}
			if u.GetKind() == "ServiceAccount" {
				cfg.ServiceAccount = u.GetName()
			}
			cfg.Objects = append(cfg.Objects, u)
		}
	}
	if cfg.ServiceAccount == "" || cfg.Args == nil {
		return Config{}, errors.New("config/probe has no ServiceAccount or no CronJob")
	}
	return cfg, nil
}

// transform does what kustomize does to the probe's identity objects.
func (k kustomization) transform(u *unstructured.Unstructured) error {
	u.SetName(k.NamePrefix + u.GetName())
	if !clusterScoped[u.GetKind()] {
		u.SetNamespace(k.Namespace)
	}
	labels := u.GetLabels()
	for _, l := range k.Labels {
		for key, v := range l.Pairs {
			if labels == nil {
				labels = map[string]string{}
			}
			labels[key] = v
		}
	}
	u.SetLabels(labels)
	switch u.GetKind() {
	case "RoleBinding":
		ref, _, _ := unstructured.NestedString(u.Object, "roleRef", "name")
		if err := unstructured.SetNestedField(u.Object, k.NamePrefix+ref, "roleRef", "name"); err != nil {
			return err
		}
		subjects, _, _ := unstructured.NestedSlice(u.Object, "subjects")
		for _, s := range subjects {
			m, ok := s.(map[string]any)
			if !ok || m["kind"] != "ServiceAccount" {
				return fmt.Errorf("RoleBinding %s: subject %v is not a ServiceAccount of the kustomization", u.GetName(), s)
			}
			m["name"], m["namespace"] = k.NamePrefix+fmt.Sprint(m["name"]), k.Namespace
		}
		return unstructured.SetNestedSlice(u.Object, subjects, "subjects")
	case "ValidatingAdmissionPolicyBinding":
		name, _, _ := unstructured.NestedString(u.Object, "spec", "policyName")
		return unstructured.SetNestedField(u.Object, k.NamePrefix+name, "spec", "policyName")
	}
	return nil
}

func containerArgs(cj *unstructured.Unstructured) ([]string, error) {
	containers, _, _ := unstructured.NestedSlice(cj.Object, "spec", "jobTemplate", "spec", "template", "spec", "containers")
	if len(containers) != 1 {
		return nil, fmt.Errorf("CronJob %s has %d containers, want 1", cj.GetName(), len(containers))
	}
	c, _ := containers[0].(map[string]any)
	args, _, err := unstructured.NestedStringSlice(c, "args")
	return args, err
}

// RuntimeIDs is the value of --runtime-ids in args, as written (not split).
func RuntimeIDs(args []string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--runtime-ids="); ok {
			return v
		}
	}
	return ""
}

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
