package runtimeconfig

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/kyma-project/kim/core/domain/shoot"
)

// Facts are what the desired state inside a runtime is computed from: the Runtime, the operator's configuration
// and what was observed of the shoot and the landscape.
type Facts struct {
	Runtime shoot.Runtime
	// Config is the shoot generation configuration (it holds the default customer issuer).
	Config shoot.Config
	// InstanceID and InstanceName are KEB's labels kyma-project.io/instance-id and operator.kyma-project.io/kyma-name.
	InstanceID, InstanceName string
	// OIDCServed is true when the shoot has shoot-oidc-service, which serves OpenIDConnect resources: only then are
	// they written and pruned (without it the resources mean nothing and their CRD does not exist).
	OIDCServed bool
	Shoot      ShootFacts
	// Bootstrap is the landscape's bootstrap set; nil when none is configured.
	Bootstrap *Bootstrap
}

// ShootFacts are what the desired state needs of the shoot.
type ShootFacts struct {
	// SeedRegion is the region of the seed hosting the control plane; empty until Gardener scheduled it.
	SeedRegion string
	// ReconciledAt is when Gardener last finished an operation on the shoot successfully; zero: never yet.
	ReconciledAt time.Time
	DualStack    bool
	// Zones are the zones of the shoot's infrastructure with their subnets.
	Zones []Zone
	// InfrastructureConfig is the shoot's provider infrastructure config as JSON (spec.provider.infrastructureConfig);
	// empty when it has none.
	InfrastructureConfig []byte
}

// Desired is the state the operator keeps inside a runtime.
type Desired struct {
	RuntimeID string
	// ProvisioningInfo is the rendered document of the kyma-provisioning-info ConfigMap.
	ProvisioningInfo string
	// ManageOIDC says whether OpenIDConnect resources are written and pruned at all (see Facts.OIDCServed).
	ManageOIDC bool
	OIDC       []OIDCResource
	// Administrators are the cluster-admin bindings, sorted by name.
	Administrators []AdminBinding
	// ReservedAdministrators are the administrator names given no binding (ReservedAdministrators); they only
	// change the words of the outcome, so the hash leaves them out.
	ReservedAdministrators []string `json:"-"`
	// Bootstrap is the set to apply; nil when none is configured or while the runtime is held (BootstrapHold).
	Bootstrap *Bootstrap
	// BootstrapHash identifies the set the runtime is to hold: Bootstrap's content hash, or, while it is held, that
	// of the set it was last given. The desired state's hash covers the set through it (see Hash).
	BootstrapHash string `json:"-"`
	// BootstrapHold is set while the rollout of a changed set does not admit the runtime: its bootstrap objects are
	// left as they are, and this is the outcome its Bootstrapped condition reports.
	BootstrapHold *Outcome `json:"-"`
	// infoBody is the length of ProvisioningInfo without its lastReconcileTime line (Compute sets it).
	infoBody int
}

// AtReconcileTime returns d as Compute returns it for the same facts with the shoot's reconcile time t: only the
// document's last line differs, so the rest of the document is not rendered again. The Runtime controller asks it
// on every Gardener success, to learn whether only the reconcile time changed since the runtime was configured.
func (d Desired) AtReconcileTime(t time.Time) (Desired, error) {
	if d.infoBody > len(d.ProvisioningInfo) || d.infoBody == 0 {
		return Desired{}, fmt.Errorf("render %s: the desired state was not computed", ProvisioningInfoName)
	}
	tail, err := renderReconcileTime(formatTime(t))
	if err != nil {
		return Desired{}, err
	}
	d.ProvisioningInfo = d.ProvisioningInfo[:d.infoBody] + tail
	return d, nil
}

// Compute returns the desired state for f. It fails only when the document cannot be rendered, which plain values
// never cause.
func Compute(f Facts) (Desired, error) {
	return (*Documents)(nil).Compute(f)
}

// desired is the desired state for f with its document rendered in two parts (renderParts).
func desired(f Facts, body, tail string) Desired {
	d := Desired{RuntimeID: f.Runtime.ID, ProvisioningInfo: body + tail, infoBody: len(body), ManageOIDC: f.OIDCServed,
		Administrators: adminBindings(f.Runtime.Administrators), ReservedAdministrators: ReservedAdministrators(f.Runtime.Administrators), Bootstrap: f.Bootstrap, BootstrapHash: f.Bootstrap.ContentHash()}
	if f.OIDCServed {
		d.OIDC = oidcResources(shoot.CustomerIssuers(f.Runtime, f.Config))
	}
	return d
}

func provisioningInfo(f Facts) ProvisioningInfo {
	rt := f.Runtime
	p := ProvisioningInfo{
		GlobalAccountID: rt.GlobalAccountID, SubaccountID: rt.SubaccountID, EnvironmentInstanceID: f.InstanceID,
		InstanceID: f.InstanceID, InstanceName: f.InstanceName, RuntimeID: rt.ID, ShootName: rt.Name, Provider: string(rt.Provider), Region: rt.Region,
		PlatformRegion: rt.PlatformRegion, SeedRegion: f.Shoot.SeedRegion,
		Infrastructure: Infrastructure{Nodes: rt.Networking.Nodes, Pods: rt.Networking.Pods, Services: rt.Networking.Services},
		NetworkDetails: NetworkDetails{DualStackIPEnabled: f.Shoot.DualStack,
			KubeAPIServer: KubeAPIServer{ACL: slices.Clone(rt.ACL)}},
		LastReconcileTime: formatTime(f.Shoot.ReconciledAt),
	}
	if raw := f.Shoot.InfrastructureConfig; len(raw) > 0 {
		// Gardener stores it as JSON; a document that is not (it never happens) is left out rather than written broken.
		var v map[string]any
		if json.Unmarshal(raw, &v) == nil && len(v) > 0 {
			p.InfrastructureConfig = v
		}
	}
	for _, z := range f.Shoot.Zones {
		p.Infrastructure.Zones = append(p.Infrastructure.Zones, Zone{Name: z.Name, CIDRs: slices.Clone(z.CIDRs)})
	}
	for i, w := range rt.Workers {
		pool := WorkerPool{Name: w.Name, MachineType: w.MachineType, HAZones: highAvailability(w.Zones),
			AutoScalerMin: w.Minimum, AutoScalerMax: w.Maximum}
		if i == 0 {
			p.WorkerPools.Kyma = pool
			continue
		}
		p.WorkerPools.Custom = append(p.WorkerPools.Custom, pool)
	}
	return p
}

// HoldBootstrap returns d for a runtime the rollout of the set does not admit (yet): the configurator leaves its
// bootstrap objects as they are (no apply, no prune, no drift correction), why is what its Bootstrapped condition
// reports, and the desired state names the set the runtime was last given (kept, a content hash; "" for none), so
// that holding alone neither makes the runtime be configured again on every pass nor hides the change: once
// admitted, the desired state names the new set and differs from the one reached.
func (d Desired) HoldBootstrap(kept string, why Outcome) Desired {
	d.Bootstrap, d.BootstrapHash, d.BootstrapHold = nil, kept, &why
	return d
}

// BootstrapConfigured reports whether the landscape configures bootstrap manifests (applied or held): only then is
// a Bootstrapped condition reported.
func (d Desired) BootstrapConfigured() bool { return d.Bootstrap != nil || d.BootstrapHold != nil }

// Hash identifies the desired state: equal states hash equally. It is recorded on the Runtime when the state was
// reached, so a different hash means something is to be written. The bootstrap set enters by BootstrapHash, in the
// place the whole set took before: without bootstrap manifests the hash is the one earlier versions recorded (an
// upgrade configures no runtime again), and a held runtime's hash is the one it reached with the set it keeps.
func (d Desired) Hash() string {
	view := struct {
		Desired
		Bootstrap *string `json:"Bootstrap"` // shadows Desired.Bootstrap and, like it, is the last field
	}{Desired: d}
	if d.BootstrapHash != "" {
		view.Bootstrap = &d.BootstrapHash
	}
	raw, err := json.Marshal(view)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:12])
}
