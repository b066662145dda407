package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/internal/cli"
	"github.com/kyma-project/kim/test/sandbox/catalogue"
	"github.com/kyma-project/kim/test/sandbox/gardenbox"
)

// sampleRef identifies an applied sample object.
type sampleRef struct {
	apiVersion, kind, namespace, name string
}

func (s sampleRef) String() string {
	if s.namespace == "" {
		return s.kind + " " + s.name
	}
	return s.kind + " " + s.namespace + "/" + s.name
}

// applySamples creates every object of the YAML files in dir (sorted by file name; kustomization.yaml is
// skipped) in the KCP with server-side apply.
func applySamples(ctx context.Context, env *gardenbox.Env, dir string, out *cli.Printer) ([]sampleRef, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	files = slices.DeleteFunc(files, func(f string) bool { return filepath.Base(f) == "kustomization.yaml" })
	if len(files) == 0 {
		out.Say("no samples in %s: nothing to apply (pass --no-samples to silence this)", dir)
		return nil, nil
	}
	var refs []sampleRef
	for _, file := range files {
		objs, err := readManifests(file)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if err := env.KCPClient.Apply(ctx, client.ApplyConfigurationFromUnstructured(o), client.FieldOwner("kim-sandbox"), client.ForceOwnership); err != nil {
				return nil, fmt.Errorf("apply %s %s from %s: %w", o.GetKind(), o.GetName(), file, err)
			}
			ref := sampleRef{apiVersion: o.GetAPIVersion(), kind: o.GetKind(), namespace: o.GetNamespace(), name: o.GetName()}
			refs = append(refs, ref)
			out.Say("applied %s", ref)
		}
	}
	return refs, nil
}

func readManifests(file string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	reader := yaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []*unstructured.Unstructured
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", file, err)
		}
		if len(strings.TrimSpace(string(doc))) == 0 {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			return nil, fmt.Errorf("parse %s: %w", file, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		if u.GetKind() == "" || u.GetName() == "" {
			return nil, fmt.Errorf("%s: a document without kind or metadata.name", file)
		}
		out = append(out, u)
	}
}

// defaultProject keeps the operator's project and the catalogue's project the same (one source of truth).
func defaultProject(p string) string {
	if p == "" {
		return catalogue.Default().Project
	}
	return p
}

func catalogueFor(project string) *catalogue.Catalogue {
	c := catalogue.Default()
	c.Project = project
	return &c
}

func describeCatalogue(env *gardenbox.Env) string {
	var providers []string
	regions, bindings := 0, 0
	for _, p := range env.Catalogue.Providers {
		providers = append(providers, p.CloudProfile)
		regions += len(p.Regions)
		bindings += len(p.CredentialsBindings)
	}
	return fmt.Sprintf("project %s; cloud profiles %s; %d seeds; %d credentials bindings",
		env.Catalogue.ProjectNamespace(), strings.Join(providers, ", "), regions, bindings)
}
