package migrate

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	securityv1alpha1 "github.com/gardener/gardener/pkg/apis/security/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/gardener"
	"github.com/kyma-project/kim/adapters/gardener/translate"
	"github.com/kyma-project/kim/core/domain/kubeconfig"
	"github.com/kyma-project/kim/core/domain/migration"
	"github.com/kyma-project/kim/core/domain/shoot"
	"github.com/kyma-project/kim/core/ports"
	"github.com/kyma-project/kim/internal/mapping"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// AnnotationMigratedFrom records on a Runtime created by kim migrate which system created its shoot.
const AnnotationMigratedFrom = "infrastructuremanager.kyma-project.io/migrated-from"

// Verification methods of differences (migration.Item.VerifiedBy).
const (
	VerifiedByComparison = "comparison"
	VerifiedByDryRun     = "comparison and server-side dry-run"
)

// prepared is a Runtime generated back from its shoot, with what stands in its way.
type prepared struct {
	runtime       *imv1.Runtime
	problems      []migration.Problem
	secretBinding string
	differences   []migration.Difference
	verifiedBy    string
}

func notExpressible(format string, args ...any) migration.Problem {
	return migration.Problem{Reason: migration.ReasonNotExpressible, Message: fmt.Sprintf(format, args...)}
}

// prepareRuntime generates the Runtime of c back from its shoot and computes what the operator's apply after
// adopting the shoot would change, exactly as the operator will compute it (GenerateUpdate on the live shoot).
func (m *Migrator) prepareRuntime(ctx context.Context, land *landscape, c migration.Candidate) (prepared, error) {
	s := land.shoots[c.ShootName]
	cfg := m.Config
	cfg.ACL.ControlPlaneCIDRs, cfg.ACL.ControlPlaneCIDRsProblem = land.controlPlaneCIDRs, land.cidrsProblem
	auth, err := m.authenticationData(ctx, s)
	if err != nil {
		return prepared{}, err
	}
	rec := translate.RuntimeFromShoot(s, auth, cfg)
	out := prepared{secretBinding: rec.SecretBinding}
	for _, p := range rec.Problems {
		out.problems = append(out.problems, notExpressible("shoot %s: %s", s.Name, p))
	}
	rt := rec.Runtime
	rt.ID = c.RuntimeID
	rt.GlobalAccountID, rt.SubaccountID = c.Labels[migration.LabelGlobalAccountID], c.Labels[migration.LabelSubaccountID]
	rt.PlatformRegion = c.Labels[migration.LabelPlatformRegion]
	admins, err := m.administrators(ctx, c.RuntimeID)
	if err != nil {
		out.problems = append(out.problems, migration.Problem{Reason: migration.ReasonAdministratorsUnknown, Message: fmt.Sprintf(
			"the administrators of runtime %s cannot be read from the runtime (%v); a Runtime without them would remove their access", c.RuntimeID, err)})
	}
	rt.Administrators = admins
	if rec.SecretBinding != "" {
		if p := m.checkBindings(ctx, rec.SecretBinding); p != nil {
			out.problems = append(out.problems, *p)
		}
	}
	cr, err := mapping.RuntimeCR(rt, c.Namespace, c.Labels)
	if err != nil {
		out.problems = append(out.problems, notExpressible("%v", err))
		return out, nil
	}
	cr.Annotations = map[string]string{AnnotationMigratedFrom: c.CreatedBy}
	out.runtime = cr
	// What the operator does with the new Runtime (generation 1) once it has adopted the shoot.
	return out, m.takeoverDifferences(ctx, s, auth, cr, 1, c, cfg, &out)
}

// prepareExisting computes what the operator's first apply to the shoot of an existing Runtime rt would change
// (the operator holds it in the adopt-only mode until it is approved).
func (m *Migrator) prepareExisting(ctx context.Context, land *landscape, c migration.Candidate, rt *imv1.Runtime) (prepared, error) {
	s := land.shoots[c.ShootName]
	cfg := m.Config
	cfg.ACL.ControlPlaneCIDRs, cfg.ACL.ControlPlaneCIDRsProblem = land.controlPlaneCIDRs, land.cidrsProblem
	auth, err := m.authenticationData(ctx, s)
	if err != nil {
		return prepared{}, err
	}
	out := prepared{runtime: rt}
	if s.Spec.SecretBindingName != nil { //nolint:staticcheck // read to migrate shoots away from it
		out.secretBinding = *s.Spec.SecretBindingName //nolint:staticcheck // read to migrate shoots away from it
	}
	return out, m.takeoverDifferences(ctx, s, auth, rt, rt.Generation, c, cfg, &out)
}

// takeoverDifferences fills out with what the operator's first apply of Runtime cr (at generation) to the adopted
// shoot s would change, computed as the operator computes it (GenerateUpdate on the live shoot), verified by the
// gardener-apiserver's dry run unless NoServerDryRun (or the shoot is still on a SecretBinding).
func (m *Migrator) takeoverDifferences(ctx context.Context, s *gardencorev1beta1.Shoot, auth map[string]string, cr *imv1.Runtime,
	generation int64, c migration.Candidate, cfg shoot.Config, out *prepared) error {
	domain := mapping.Runtime(cr)
	domain.Generation = generation
	cur, err := translate.CurrentFromShoot(s)
	if err != nil {
		out.problems = append(out.problems, notExpressible("%v", err))
		return nil
	}
	spec, err := shoot.GenerateUpdate(domain, cfg, cur)
	if err != nil {
		out.problems = append(out.problems, notExpressible("the operator would refuse Runtime %s for shoot %s: %v", c.RuntimeID, s.Name, err))
		return nil
	}
	fresh, err := shoot.Generate(domain, cfg)
	if err != nil {
		out.problems = append(out.problems, notExpressible("the operator would refuse Runtime %s for shoot %s: %v", c.RuntimeID, s.Name, err))
		return nil
	}
	a := ports.ShootApply{Spec: spec, RuntimeID: c.RuntimeID, RuntimeGeneration: domain.Generation, SpecHash: fresh.Hash(), Plan: c.Labels[migration.LabelBrokerPlanName]}
	diffs, err := gardener.AdoptionDifferences(s, auth, a)
	if err != nil {
		return err
	}
	out.verifiedBy = VerifiedByComparison
	if !m.NoServerDryRun && out.secretBinding == "" {
		adapter := &gardener.Shoots{Client: m.Garden, Live: m.Garden, Namespace: m.GardenNamespace, RuntimeNamespace: c.Namespace}
		dry, err := adapter.DryRunAdoption(ctx, s, a)
		if err != nil {
			out.problems = append(out.problems, notExpressible("the gardener-apiserver refuses the operator's apply in a dry run: %v", err))
		}
		seen := map[string]bool{}
		for _, d := range diffs {
			seen[d.Path] = true
		}
		for _, d := range dry {
			if !seen[d.Path] {
				diffs = append(diffs, d)
			}
		}
		out.verifiedBy = VerifiedByDryRun
	}
	for _, d := range diffs {
		out.differences = append(out.differences, migration.Difference{Path: d.Path, Want: render(d.Want), Have: render(d.Have)})
	}
	return nil
}

// render prints a value of a difference: strings as they are, other values as JSON, absent as "".
func render(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// authenticationData reads the structured authentication ConfigMap the shoot references; nil when it references
// none or the ConfigMap is missing (RuntimeFromShoot reports the latter).
func (m *Migrator) authenticationData(ctx context.Context, s *gardencorev1beta1.Shoot) (map[string]string, error) {
	api := s.Spec.Kubernetes.KubeAPIServer
	if api == nil || api.StructuredAuthentication == nil {
		return nil, nil
	}
	cm := &corev1.ConfigMap{}
	err := m.Garden.Get(ctx, client.ObjectKey{Namespace: m.GardenNamespace, Name: api.StructuredAuthentication.ConfigMapName}, cm)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read ConfigMap %s of shoot %s: %w", api.StructuredAuthentication.ConfigMapName, s.Name, err)
	}
	if cm.Data == nil {
		return map[string]string{}, nil
	}
	return cm.Data, nil
}

// checkSecret refuses a GardenerCluster whose kubeconfig Secret the operator would not write (the same check as
// the GardenerCluster controller's): KEB's kubeconfig-<runtimeID> of this runtime is taken over, anything else not.
func (m *Migrator) checkSecret(ctx context.Context, c migration.Candidate) *migration.Problem {
	sec := &corev1.Secret{}
	err := m.KCP.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: kubeconfig.SecretName(c.RuntimeID)}, sec)
	if apierrors.IsNotFound(err) {
		return nil // the operator creates it
	}
	if err != nil {
		return &migration.Problem{Reason: migration.ReasonSecretNotOwned, Message: fmt.Sprintf("read Secret %s: %v", kubeconfig.SecretName(c.RuntimeID), err)}
	}
	_, err = kubeconfig.CheckClusterSecret(c.Namespace, c.RuntimeID, c.Namespace, sec.Name,
		&kubeconfig.ExistingSecret{Name: sec.Name, Labels: sec.Labels, Annotations: sec.Annotations})
	if err != nil {
		return &migration.Problem{Reason: migration.ReasonSecretNotOwned, Message: err.Error()}
	}
	return nil
}

// adminBindingManagers are the values of reconciler.kyma-project.io/managed-by on the administrators'
// ClusterRoleBindings: this operator's and the previous infrastructure manager's, the reconciler's and the
// provisioner's.
var adminBindingManagers = []string{"infrastructure-manager", "reconciler", "provisioner"}

// administrators reads the users bound to cluster-admin by the systems that managed the runtime, through the
// runtime's kubeconfig Secret. An empty result is an error: every KEB runtime has administrators, and a Runtime
// listing none makes the operator remove the bindings it manages.
func (m *Migrator) administrators(ctx context.Context, runtimeID string) ([]string, error) {
	sec := &corev1.Secret{}
	if err := m.KCP.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: kubeconfig.SecretName(runtimeID)}, sec); err != nil {
		return nil, fmt.Errorf("read kubeconfig Secret: %w", err)
	}
	kc := sec.Data[kubeconfig.SecretKey]
	if len(kc) == 0 {
		return nil, fmt.Errorf("kubeconfig Secret %s is empty", sec.Name)
	}
	connect := m.RuntimeClient
	if connect == nil {
		connect = runtimeClient
	}
	c, err := connect(kc)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var admins []string
	for _, manager := range adminBindingManagers {
		names, err := adminBindings(ctx, c, manager)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			if !slices.Contains(admins, n) {
				admins = append(admins, n)
			}
		}
	}
	if len(admins) == 0 {
		return nil, fmt.Errorf("no cluster-admin ClusterRoleBinding labelled %s in %v", adminBindingLabel, adminBindingManagers)
	}
	slices.Sort(admins)
	return admins, nil
}

// checkBindings: the operator switches a shoot from SecretBinding name to the CredentialsBinding of the same name,
// which Gardener accepts only for the same credentials.
func (m *Migrator) checkBindings(ctx context.Context, name string) *migration.Problem {
	sb := &gardencorev1beta1.SecretBinding{} //nolint:staticcheck // read to migrate shoots away from it
	cb := &securityv1alpha1.CredentialsBinding{}
	key := client.ObjectKey{Namespace: m.GardenNamespace, Name: name}
	if err := m.Garden.Get(ctx, key, sb); err != nil {
		return &migration.Problem{Reason: migration.ReasonCredentialsBinding, Message: fmt.Sprintf("read SecretBinding %s: %v", name, err)}
	}
	if err := m.Garden.Get(ctx, key, cb); err != nil {
		return &migration.Problem{Reason: migration.ReasonCredentialsBinding, Message: fmt.Sprintf(
			"the shoot still uses SecretBinding %s and no CredentialsBinding %s can be read (%v): create one for the same credentials first", name, name, err)}
	}
	ref := cb.CredentialsRef
	if ref.Kind != "Secret" || ref.Name != sb.SecretRef.Name || ref.Namespace != secretNamespace(sb) {
		return &migration.Problem{Reason: migration.ReasonCredentialsBinding, Message: fmt.Sprintf(
			"CredentialsBinding %s references %s %s/%s, SecretBinding %s the Secret %s/%s: Gardener switches a shoot only to the same credentials",
			name, ref.Kind, ref.Namespace, ref.Name, name, secretNamespace(sb), sb.SecretRef.Name)}
	}
	return nil
}

//nolint:staticcheck // read to migrate shoots away from it
func secretNamespace(sb *gardencorev1beta1.SecretBinding) string {
	if sb.SecretRef.Namespace != "" {
		return sb.SecretRef.Namespace
	}
	return sb.Namespace
}
