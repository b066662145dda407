package shoot

import "github.com/kyma-project/kim/core/domain/wire"

// AnnotationRuntimeNamespace records on a shoot, and on the garden ConfigMaps the operator writes for it, the KCP
// namespace of the Runtime it belongs to (with AnnotationRuntimeID, the Runtime's name).
const AnnotationRuntimeNamespace = "infrastructuremanager.kyma-project.io/runtime-namespace"

// RuntimeOf returns the Runtime (namespace, name) a garden object belongs to, from the operator's marks on it: the
// managed-by label, the runtime ID and the runtime namespace annotations. An object without all three belongs to no
// Runtime (ok false): objects of other systems, and shoots adopted from the previous system before their first apply.
// This is how events of the garden find their Runtime.
func RuntimeOf(labels, annotations map[string]string) (namespace, name string, ok bool) {
	if labels[wire.LabelManagedBy] != wire.ManagedByValue {
		return "", "", false
	}
	name, namespace = annotations[AnnotationRuntimeID], annotations[AnnotationRuntimeNamespace]
	if name == "" || namespace == "" {
		return "", "", false
	}
	return namespace, name, true
}
