package sakubeconfig

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"time"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
)

// Annotations of the kubeconfig Secret besides AnnotationOwner. The issue time and expiry use the keys of admin
// kubeconfig Secrets, so tools that watch expiries read both alike. The Secret deliberately carries neither the
// GardenerCluster owner annotation nor the cluster-name label: consumers find admin kubeconfigs by those.
const (
	// AnnotationRuntimeID and AnnotationServiceAccount say whose kubeconfig the Secret holds.
	AnnotationRuntimeID      = "infrastructuremanager.kyma-project.io/runtime-id"
	AnnotationServiceAccount = "infrastructuremanager.kyma-project.io/service-account"
	// AnnotationEndpoint is Endpoint.Fingerprint() of the API server the kubeconfig was issued for.
	AnnotationEndpoint = "infrastructuremanager.kyma-project.io/endpoint"
)

// Endpoint is the address of a runtime's API server and the CA that signs its serving certificate, as the admin
// kubeconfig names them.
type Endpoint struct {
	Server string
	CAData []byte
}

// Fingerprint identifies the endpoint: a runtime re-created under its ID has another CA (and its old tokens do not
// work there).
func (e Endpoint) Fingerprint() string {
	h := sha256.New()
	h.Write([]byte(e.Server))
	h.Write([]byte{0})
	h.Write(e.CAData)
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// Issued describes the kubeconfig in a Secret.
type Issued struct {
	RuntimeID           string
	ServiceAccount      ServiceAccount
	Endpoint            Endpoint
	IssuedAt, ExpiresAt time.Time
}

// SecretLabels are the labels of the kubeconfig Secret of owner.
func SecretLabels(owner Owner) map[string]string { return Labels(owner) }

// SecretAnnotations are the annotations of the kubeconfig Secret of owner holding the kubeconfig described by in.
func SecretAnnotations(owner Owner, in Issued) map[string]string {
	a := Annotations(owner)
	maps.Copy(a, map[string]string{
		kubeconfig.AnnotationLastSync:  kubeconfig.FormatTime(in.IssuedAt),
		kubeconfig.AnnotationExpiresAt: kubeconfig.FormatTime(in.ExpiresAt),
		AnnotationRuntimeID:            in.RuntimeID,
		AnnotationServiceAccount:       in.ServiceAccount.String(),
		AnnotationEndpoint:             in.Endpoint.Fingerprint(),
	})
	return a
}

// ErrSecretNotOwned: the Secret a request names exists and was not written for it (an admin kubeconfig, another
// request's, anything else). The operator neither overwrites nor deletes it. It is the one error of that meaning,
// shared with GardenerClusters' kubeconfig Secrets.
var ErrSecretNotOwned = kubeconfig.ErrSecretNotOwned

// SecretVerdict says what the request may do with the Secret it names.
type SecretVerdict int

// Verdicts of CheckRequestSecret.
const (
	SecretAbsent SecretVerdict = iota
	SecretOwned
)

// CheckRequestSecret decides whether the request owner may write the Secret it names, name in the owner's namespace
// (exists false: the Secret does not exist). Only a Secret written for exactly this request may be replaced or
// deleted. Not to be confused with kubeconfig.CheckClusterSecret, the rules for a GardenerCluster's Secret.
func CheckRequestSecret(owner Owner, name string, exists bool, annotations map[string]string) (SecretVerdict, error) {
	if !exists {
		return SecretAbsent, nil
	}
	if got := annotations[AnnotationOwner]; got != owner.String() {
		if got == "" {
			return 0, fmt.Errorf("%w: Secret %s/%s was not written by the operator for it", ErrSecretNotOwned, owner.Namespace, name)
		}
		return 0, fmt.Errorf("%w: Secret %s/%s belongs to %s", ErrSecretNotOwned, owner.Namespace, name, got)
	}
	return SecretOwned, nil
}

// TriggerRuntimeChanged: the kubeconfig was issued for another API server or CA than the runtime's admin kubeconfig
// names now (the runtime was re-created under its ID).
const TriggerRuntimeChanged kubeconfig.Trigger = "runtime-changed"

// Recorded is what the kubeconfig Secret says about the kubeconfig it holds.
type Recorded struct {
	kubeconfig.Recorded
	// Endpoint is the recorded AnnotationEndpoint ("" when absent).
	Endpoint string
}

// RecordedFrom reads a Secret's annotations (exists false: there is no Secret).
func RecordedFrom(exists, hasKubeconfig bool, annotations map[string]string) Recorded {
	if !exists {
		return Recorded{}
	}
	return Recorded{
		Recorded: kubeconfig.Recorded{SecretExists: true, HasKubeconfig: hasKubeconfig,
			IssuedAt: annotations[kubeconfig.AnnotationLastSync], ExpiresAt: annotations[kubeconfig.AnnotationExpiresAt]},
		Endpoint: annotations[AnnotationEndpoint],
	}
}

// Rotation decides whether a token must be issued now, with the rotation policy of admin kubeconfigs (see
// kubeconfig.Policy.Decide: forced, missing, invalid, expired or due), plus when the runtime's endpoint changed.
// The owner is the jitter key, so requests issued together do not all rotate in the same second.
func Rotation(p kubeconfig.Policy, now time.Time, owner Owner, rec Recorded, force bool, current Endpoint) kubeconfig.Decision {
	d := p.Decide(now, owner.String(), rec.Recorded, force, kubeconfig.ShootRef{})
	if d.Issue || rec.Endpoint == "" || rec.Endpoint == current.Fingerprint() {
		return d
	}
	return kubeconfig.Decision{Issue: true, Trigger: TriggerRuntimeChanged, ExpiresAt: d.ExpiresAt,
		Detail: "the kubeconfig was issued for another API server or CA than the runtime's admin kubeconfig names now"}
}
