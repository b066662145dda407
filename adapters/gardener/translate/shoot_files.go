package translate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"sigs.k8s.io/yaml"
)

// DecodeShoot decodes a Shoot from YAML or JSON; unknown fields are errors, so a file that is not
// a valid core.gardener.cloud/v1beta1 Shoot does not load silently.
func DecodeShoot(data []byte) (*gardencorev1beta1.Shoot, error) {
	var s gardencorev1beta1.Shoot
	if err := yaml.UnmarshalStrict(data, &s); err != nil {
		return nil, fmt.Errorf("decode shoot: %w", err)
	}
	return &s, nil
}

// LoadShoots reads every *.yaml file of dir as a Shoot, keyed by file name without extension.
// The golden shoots in testdata/shoots load this way for tests against a real gardener-apiserver.
func LoadShoots(dir string) (map[string]*gardencorev1beta1.Shoot, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, fmt.Errorf("list shoots in %s: %w", dir, err)
	}
	out := make(map[string]*gardencorev1beta1.Shoot, len(files))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f, err)
		}
		s, err := DecodeShoot(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".yaml")] = s
	}
	return out, nil
}
