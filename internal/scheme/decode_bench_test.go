package scheme_test

import (
	"os"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim/internal/scheme"
)

// BenchmarkShootDecode decodes a shoot of the golden set, with a finished last operation, from each wire format the
// gardener-apiserver serves: the cost of one Gardener report in the operator's shoot watch.
//
//	go test ./internal/scheme -run '^$' -bench ShootDecode
func BenchmarkShootDecode(b *testing.B) {
	raw, err := os.ReadFile("../../adapters/gardener/testdata/shoots/aws-acl-multi-oidc.yaml")
	if err != nil {
		b.Fatal(err)
	}
	s := &gardencorev1beta1.Shoot{}
	if err := yaml.Unmarshal(raw, s); err != nil {
		b.Fatal(err)
	}
	s.Status.LastOperation = &gardencorev1beta1.LastOperation{Type: gardencorev1beta1.LastOperationTypeReconcile,
		State: gardencorev1beta1.LastOperationStateSucceeded, Progress: 100, Description: "Shoot cluster has been successfully reconciled."}
	sch, err := scheme.New()
	if err != nil {
		b.Fatal(err)
	}
	codecs := serializer.NewCodecFactory(sch)
	for _, mediaType := range []string{runtime.ContentTypeJSON, runtime.ContentTypeProtobuf} {
		info, ok := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), mediaType)
		if !ok {
			b.Fatalf("no serializer for %s", mediaType)
		}
		data, err := runtime.Encode(info.Serializer, s)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(mediaType, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, _, err := info.Serializer.Decode(data, nil, &gardencorev1beta1.Shoot{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
