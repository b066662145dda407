package kube

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/core/domain/wire"
	"github.com/kyma-project/kim/core/ports"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// RuntimeRegistry implements ports.RuntimeRegistry on the KCP.
type RuntimeRegistry struct {
	// Live reads from the API server (never a cache: the answer decides whether a cluster may be deleted).
	Live client.Reader
	// Writer creates restored Runtimes.
	Writer client.Client
	// Namespaces are the watched KCP namespaces.
	Namespaces []string
}

var _ ports.RuntimeRegistry = (*RuntimeRegistry)(nil)

// Claims implements ports.RuntimeRegistry.
func (r *RuntimeRegistry) Claims(ctx context.Context, runtimeID, shootName string) (bool, error) {
	for _, ns := range r.Namespaces {
		rt := &imv1.Runtime{}
		err := r.Live.Get(ctx, client.ObjectKey{Namespace: ns, Name: runtimeID}, rt)
		switch {
		case err == nil && rt.Spec.Shoot.Name == shootName:
			return true, nil
		case err == nil:
			continue
		case !apierrors.IsNotFound(err):
			return false, transient("look up Runtime "+ns+"/"+runtimeID, err)
		}
	}
	return false, nil
}

// Recreate implements ports.RuntimeRegistry.
func (r *RuntimeRegistry) Recreate(ctx context.Context, req ports.RestoreRequest, dryRun bool) error {
	rt, err := DecodeRestoreDocument(req)
	if err != nil {
		return err
	}
	opts := []client.CreateOption{}
	if dryRun {
		opts = append(opts, client.DryRunAll)
	}
	err = r.Writer.Create(ctx, rt, opts...)
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create Runtime %s/%s: %w", rt.Namespace, rt.Name, err)
	}
	return nil
}

// DecodeRestoreDocument turns a restore document into the Runtime to create, checking that it is exactly the
// Runtime the deletion record names: same runtime ID, same namespace, same shoot. A document edited to point
// elsewhere (or to another shoot) is refused, so a restore can never hand a cluster to another runtime.
func DecodeRestoreDocument(req ports.RestoreRequest) (*imv1.Runtime, error) {
	rt := &imv1.Runtime{}
	if err := json.Unmarshal(req.Document, rt); err != nil {
		return nil, fmt.Errorf("decode the recorded Runtime: %w: %w", ports.ErrInvalidRestoreDocument, err)
	}
	if rt.Name != req.RuntimeID || rt.Namespace != req.Namespace || rt.Spec.Shoot.Name != req.ShootName {
		return nil, fmt.Errorf("the recorded Runtime is %s/%s with shoot %q, the deletion record names %s/%s with shoot %q: %w",
			rt.Namespace, rt.Name, rt.Spec.Shoot.Name, req.Namespace, req.RuntimeID, req.ShootName, ports.ErrInvalidRestoreDocument)
	}
	out := &imv1.Runtime{
		TypeMeta:   metav1.TypeMeta{APIVersion: imv1.GroupVersion.String(), Kind: "Runtime"},
		ObjectMeta: metav1.ObjectMeta{Name: rt.Name, Namespace: rt.Namespace, Labels: rt.Labels},
		Spec:       rt.Spec,
	}
	metav1.SetMetaDataAnnotation(&out.ObjectMeta, wire.AnnotationRestore, "true")
	return out, nil
}
