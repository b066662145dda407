package translate

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim/core/domain/shoot"
)

// workerFromShoot recovers a pool as a Runtime sends it: the whole Gardener pool (Raw) without what generation adds
// by itself (the AWS instance metadata settings of the landscape, machine settings equal to the configured
// defaults), and the fields the domain reads.
func workerFromShoot(w gardencorev1beta1.Worker, p shoot.Provider, cfg shoot.Config) (shoot.Worker, error) {
	w = *w.DeepCopy()
	if w.ProviderConfig != nil && p == shoot.AWS && cfg.Features.AWSIMDSv2 {
		gen, err := workerConfig(shoot.AWS, shoot.WorkerSpec{IMDSv2: true})
		if err != nil {
			return shoot.Worker{}, err
		}
		if sameJSON(w.ProviderConfig.Raw, gen.Raw) {
			w.ProviderConfig = nil
		}
	}
	if m := w.MachineControllerManagerSettings; m != nil {
		if d, err := time.ParseDuration(cfg.Workers.MachineDrainTimeout); err == nil && m.MachineDrainTimeout != nil && m.MachineDrainTimeout.Duration == d {
			m.MachineDrainTimeout = nil
		}
		if r := cfg.Workers.MaxEvictRetries; r != nil && m.MaxEvictRetries != nil && *m.MaxEvictRetries == *r {
			m.MaxEvictRetries = nil
		}
		if reflect.ValueOf(*m).IsZero() {
			w.MachineControllerManagerSettings = nil
		}
	}
	out := poolFromShoot(w)
	if w.CRI != nil {
		for _, cr := range w.CRI.ContainerRuntimes {
			rt := shoot.ContainerRuntime{Type: cr.Type}
			if cr.ProviderConfig != nil && len(cr.ProviderConfig.Raw) > 0 {
				var c struct {
					ConfigFlags map[string]string `json:"configFlags"`
				}
				if err := json.Unmarshal(cr.ProviderConfig.Raw, &c); err != nil {
					return shoot.Worker{}, fmt.Errorf("container runtime %s: configFlags must be strings: %w", cr.Type, err)
				}
				rt.ConfigFlags = c.ConfigFlags
			}
			out.ContainerRuntimes = append(out.ContainerRuntimes, rt)
		}
	}
	raw, err := json.Marshal(w)
	if err != nil {
		return shoot.Worker{}, fmt.Errorf("encode pool: %w", err)
	}
	out.Raw = raw
	return out, nil
}

// poolFromShoot reads a pool's fields the domain knows by name: all but the configuration of its container runtimes
// and the pool as a whole (Raw), which only recovering a Runtime needs (workerFromShoot). CurrentFromShoot reads the
// pools of an existing shoot through it too, so both read a pool the same way.
func poolFromShoot(w gardencorev1beta1.Worker) shoot.Worker {
	out := shoot.Worker{Name: w.Name, MachineType: w.Machine.Type, Minimum: w.Minimum, Maximum: w.Maximum,
		Zones: slices.Clone(w.Zones), Labels: w.Labels, Annotations: w.Annotations}
	if img := w.Machine.Image; img != nil {
		out.ImageName, out.ImageVersion = img.Name, ptr.Deref(img.Version, "")
	}
	if w.MaxSurge != nil {
		out.MaxSurge = w.MaxSurge.String()
	}
	if w.MaxUnavailable != nil {
		out.MaxUnavailable = w.MaxUnavailable.String()
	}
	if v := w.Volume; v != nil {
		out.VolumeType, out.VolumeSize = ptr.Deref(v.Type, ""), v.VolumeSize
	}
	for _, t := range w.Taints {
		out.Taints = append(out.Taints, shoot.Taint{Key: t.Key, Value: t.Value, Effect: string(t.Effect)})
	}
	if w.CRI != nil {
		out.CRI = string(w.CRI.Name)
	}
	if k := w.Kubernetes; k != nil && k.Kubelet != nil && k.Kubelet.MaxPods != nil {
		out.MaxPods = ptr.To(*k.Kubelet.MaxPods)
	}
	if m := w.MachineControllerManagerSettings; m != nil {
		if m.MachineDrainTimeout != nil {
			out.MachineDrainTimeout = m.MachineDrainTimeout.Duration.String()
		}
		if m.MaxEvictRetries != nil {
			out.MaxEvictRetries = ptr.To(*m.MaxEvictRetries)
		}
	}
	return out
}

func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// issuersFromAuthentication recovers the customer's OIDC issuers from a structured authentication configuration:
// every authenticator and audience, without the operator's own issuers (cfg.OperatorOIDC), which every cluster gets
// anyway. A prefix the API server applies as none is written "-", as KEB does. Anything the Runtime's OIDC fields
// cannot say (CEL rules, other claim mappings, another audience policy) is an error.
func issuersFromAuthentication(data map[string]string, cfg shoot.Config) ([]shoot.OIDC, error) {
	raw, ok := data[AuthenticationConfigKey]
	if !ok {
		return nil, fmt.Errorf("the ConfigMap has no key %s", AuthenticationConfigKey)
	}
	var ac authenticationConfiguration
	if err := yaml.UnmarshalStrict([]byte(raw), &ac); err != nil {
		return nil, fmt.Errorf("cannot be expressed in a Runtime: %w", err)
	}
	out := []shoot.OIDC{}
	var errs []error
	for _, j := range ac.JWT {
		if p := j.Issuer.AudienceMatchPolicy; p != "" && p != "MatchAny" {
			errs = append(errs, fmt.Errorf("issuer %s: audienceMatchPolicy %q", j.Issuer.URL, p))
			continue
		}
		operator := map[string]bool{}
		for _, o := range cfg.OperatorOIDC {
			if o.IssuerURL == j.Issuer.URL {
				operator[o.ClientID] = true
			}
		}
		for _, aud := range j.Issuer.Audiences {
			if operator[aud] {
				continue
			}
			c := shoot.OIDC{IssuerURL: j.Issuer.URL, ClientID: aud, CABundle: j.Issuer.CertificateAuthority,
				UsernameClaim: j.ClaimMappings.Username.Claim, UsernamePrefix: prefixOf(j.ClaimMappings.Username.Prefix)}
			if g := j.ClaimMappings.Groups; g != nil && g.Claim != "" {
				c.GroupsClaim, c.GroupsPrefix = g.Claim, prefixOf(g.Prefix)
			}
			for _, r := range j.ClaimValidationRules {
				if r.Claim == "" {
					errs = append(errs, fmt.Errorf("issuer %s: a claim validation rule without a claim", j.Issuer.URL))
					continue
				}
				if c.RequiredClaims == nil {
					c.RequiredClaims = map[string]string{}
				}
				c.RequiredClaims[r.Claim] = r.RequiredValue
			}
			out = append(out, c)
		}
	}
	return out, errors.Join(errs...)
}

// prefixOf turns an applied prefix back into the Runtime's notation: none is "-".
func prefixOf(p *string) *string {
	if p == nil || *p == "" {
		return ptr.To(noPrefix)
	}
	return ptr.To(*p)
}

const noPrefix = "-"
