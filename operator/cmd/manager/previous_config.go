package main

import (
	"fmt"

	"github.com/kyma-project/kim/operator/config"
)

// overlays are what the previous infrastructure manager's flags and converter configuration (--converter-config-
// filepath, read through readFile with the files it names) state of the operator configuration; they are merged into
// the configuration document by config.ParseOverlaid.
func (s *settings) overlays(readFile func(string) ([]byte, error)) ([]*config.Overlay, error) {
	out := []*config.Overlay{s.previous.config}
	f := s.previous.converterFile
	if f == "" {
		return out, nil
	}
	conv, err := config.LoadConverterConfig(f, readFile)
	if err != nil {
		return nil, err
	}
	if err := s.checkProject(conv); err != nil {
		return nil, err
	}
	return append(out, conv), nil
}

// checkProject refuses a converter configuration whose project is not the one of --gardener-project (or the previous
// --gardener-project-name): the flag wins over gardener.project of a configuration file, but the previous manager
// used both (shoots in the flag's project, registry credentials and audit log copies in the file's), so a difference
// cannot be settled by choosing one.
func (s *settings) checkProject(conv *config.Overlay) error {
	v, origin, ok := conv.Stated("gardener", "project")
	if !ok || s.opts.GardenerProject == "" || v == s.opts.GardenerProject {
		return nil
	}
	return fmt.Errorf("gardener.project: %s says %v, --gardener-project (or the previous --gardener-project-name) says %q; they must agree",
		origin, v, s.opts.GardenerProject)
}

// fileConfig is the operator configuration when no ConfigMap is named: the --config file, or only what the previous
// manager's converter configuration and flags state (its Deployment, unchanged), each with the overlays merged in.
// source says where it came from, for the log.
func (s *settings) fileConfig(readFile func(string) ([]byte, error), overlays []*config.Overlay) (cfg *config.OperatorConfig, source string, err error) {
	if s.opts.ConfigFile == "" {
		cfg, err := config.ParseOverlaid(nil, overlays...)
		if err != nil {
			return nil, "", fmt.Errorf("operator configuration from the previous converter configuration %s: %w", s.previous.converterFile, err)
		}
		return cfg, "previous converter configuration " + s.previous.converterFile, nil
	}
	data, err := readFile(s.opts.ConfigFile)
	if err != nil {
		return nil, "", fmt.Errorf("read operator config: %w", err)
	}
	if cfg, err = config.ParseOverlaid(data, overlays...); err != nil {
		return nil, "", fmt.Errorf("operator config %s: %w", s.opts.ConfigFile, err)
	}
	return cfg, "file " + s.opts.ConfigFile, nil
}
