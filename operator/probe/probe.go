// Package probe is the end-to-end probe of a landscape (`kim probe`, a CronJob in config/probe): it provisions a small
// runtime the way KEB does (a Runtime in KCP, its status polled), proves access with the kubeconfig the operator
// issued, deletes the runtime and waits until it is gone, and reports the outcome and the duration of each phase as
// metrics. A probe that fails leaves its Runtime in place for diagnosis; the next run deletes it before it starts its
// own.
//
// Least privilege: the probe of the CronJob owns a small fixed set of runtime IDs (Options.RuntimeIDs, the same in
// the Role and the admission policy of config/probe). It reads and deletes Runtimes only by those names and reads
// only their kubeconfig Secrets; it never lists Runtimes and trusts no label, because anyone who may write Runtimes
// can set a label, and a probe that deleted what carries it would delete a customer's runtime.
package probe

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim/adapters/kube"
	"github.com/kyma-project/kim/core/domain/kubeconfig"
	imv1 "github.com/kyma-project/kim/operator/api/v1"
)

// LabelProbe marks the Runtimes of probes, for people (`kubectl get runtimes -l`). The probe itself never selects by
// it: whoever may write Runtimes can set it on any Runtime.
const LabelProbe = "infrastructuremanager.kyma-project.io/probe"

// Phases of a run, in order.
const (
	PhaseCleanup = "cleanup"
	PhaseCreate  = "create"
	PhaseReady   = "ready"
	PhaseAccess  = "access"
	PhaseDelete  = "delete"
)

// Phases lists the phases in the order they run.
var Phases = []string{PhaseCleanup, PhaseCreate, PhaseReady, PhaseAccess, PhaseDelete}

// Options of a probe.
type Options struct {
	// Namespace is the KCP namespace KEB creates Runtimes in.
	Namespace string
	// RuntimeIDs are the runtime IDs the probe owns (lower-case UUIDs, the resourceNames of its Role): a run deletes
	// the Runtimes earlier runs left under them and provisions under one of them. Empty: a fresh random ID, and
	// nothing of earlier runs is deleted (a person running `kim probe` by hand).
	RuntimeIDs []string
	// Template is the Runtime to create, as KEB sends it for the probe's plan; the probe gives it its runtime ID, a
	// fresh shoot name and instance ID. Its plan should have no deletion window (deletion.planGracePeriods), or every run
	// leaves a hibernated cluster behind for the window.
	Template *imv1.Runtime
	// ReadyTimeout bounds provisioning (KEB waits 60 minutes), DeleteTimeout the deletion (KEB: 1 hour).
	ReadyTimeout, DeleteTimeout time.Duration
	// PollInterval is how often the Runtime is read (KEB: every 10 s while provisioning).
	PollInterval time.Duration
	// KeepFailed leaves the Runtime of a failed probe for diagnosis (the next run with the same RuntimeIDs deletes
	// it).
	KeepFailed bool
	// RuntimeClient connects to the runtime with the issued kubeconfig; nil: client-go.
	RuntimeClient func(kubeconfig []byte) (kubernetes.Interface, error)
	// Progress, when set, is told what the run does as it goes: each phase's start and end, and the Runtime's
	// state whenever it changes while the probe waits for Ready.
	Progress func(format string, args ...any)
}

// PhaseResult is the outcome of one phase.
type PhaseResult struct {
	Name     string        `json:"name"`
	Duration time.Duration `json:"duration"`
	OK       bool          `json:"ok"`
}

// Result is the outcome of a run.
type Result struct {
	RuntimeID string        `json:"runtimeID"`
	Shoot     string        `json:"shoot"`
	Success   bool          `json:"success"`
	Failed    string        `json:"failedPhase,omitempty"`
	Error     string        `json:"error,omitempty"`
	Phases    []PhaseResult `json:"phases"`
	// OrphansCleaned are the Runtimes of earlier probes (under RuntimeIDs) this run deleted.
	OrphansCleaned int `json:"orphansCleaned"`
	// User is who the issued kubeconfig authenticated as in the runtime.
	User     string    `json:"user,omitempty"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// Kept is set when the Runtime of the failed probe was left in place.
	Kept bool `json:"kept,omitempty"`
	// Interrupted: the run was stopped from outside (Ctrl-C, SIGTERM) before it finished; not a verdict on the
	// landscape.
	Interrupted bool `json:"interrupted,omitempty"`
}

// Prober runs probes against a KCP.
type Prober struct {
	KCP client.Client
	Options
	// Now is the clock; nil: time.Now.
	Now func() time.Time
}

func (p *Prober) progress(format string, args ...any) {
	if p.Progress != nil {
		p.Progress(format, args...)
	}
}

// describe is what a finished phase found out, for the progress line.
func describe(phase string, res Result) string {
	switch phase {
	case PhaseCleanup:
		return fmt.Sprintf(" (runtime %s, shoot %s; %d Runtime(s) of earlier probes deleted)", res.RuntimeID, res.Shoot, res.OrphansCleaned)
	case PhaseAccess:
		return " (authenticated as " + res.User + ")"
	}
	return ""
}

func (p *Prober) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// Run probes once. The Result says how far it got; Success is false on any failure.
func (p *Prober) Run(ctx context.Context) (res Result) {
	res.Started = p.now()
	// res is the named result: the deferred write reaches the caller (a local variable's would not).
	defer func() { res.Finished = p.now() }()
	if p.Template == nil {
		res.Failed, res.Error = PhaseCreate, "no Runtime template"
		return res
	}
	if err := ValidateRuntimeIDs(p.RuntimeIDs); err != nil {
		res.Failed, res.Error = PhaseCleanup, err.Error()
		return res
	}
	var rt *imv1.Runtime
	steps := []struct {
		name string
		run  func(context.Context) error
	}{
		{PhaseCleanup, func(ctx context.Context) error {
			id, n, err := p.cleanup(ctx, res.Started)
			res.OrphansCleaned = n
			if err != nil {
				return err
			}
			if rt, err = p.newRuntime(id); err != nil {
				return err
			}
			res.RuntimeID, res.Shoot = rt.Name, rt.Spec.Shoot.Name
			return nil
		}},
		{PhaseCreate, func(ctx context.Context) error { return p.KCP.Create(ctx, rt.DeepCopy()) }},
		{PhaseReady, func(ctx context.Context) error { return p.waitReady(ctx, rt.Name) }},
		{PhaseAccess, func(ctx context.Context) error {
			user, err := p.access(ctx, rt.Name)
			res.User = user
			return err
		}},
		{PhaseDelete, func(ctx context.Context) error { return p.deleteAndWait(ctx, rt.Name, p.DeleteTimeout) }},
	}
	for _, s := range steps {
		start := p.now()
		p.progress("phase %s ...", s.name)
		err := ctx.Err() // no phase starts once the run is interrupted
		if err == nil {
			err = s.run(ctx)
		}
		res.Phases = append(res.Phases, PhaseResult{Name: s.name, Duration: p.now().Sub(start), OK: err == nil})
		if err != nil {
			p.progress("phase %s failed after %s: %v", s.name, p.now().Sub(start).Round(time.Millisecond), err)
			res.Failed, res.Error = s.name, err.Error()
			break
		}
		p.progress("phase %s ok in %s%s", s.name, p.now().Sub(start).Round(time.Millisecond), describe(s.name, res))
	}
	res.Success = res.Failed == ""
	res.Interrupted = !res.Success && ctx.Err() != nil
	if !res.Success && (res.Failed == PhaseReady || res.Failed == PhaseAccess) {
		if p.KeepFailed {
			res.Kept = true
		} else if err := p.deleteAndWait(ctx, rt.Name, p.DeleteTimeout); err != nil {
			res.Error += "; deleting it failed too: " + err.Error()
		}
	}
	return res
}

// newRuntime is the template with the run's identity: runtime ID id (a UUID, as KEB's; a fresh random one when
// empty), a fresh shoot name and instance ID.
func (p *Prober) newRuntime(id string) (*imv1.Runtime, error) {
	if id == "" {
		var err error
		if id, err = uuid(); err != nil {
			return nil, err
		}
	}
	suffix := make([]byte, 4)
	if _, err := rand.Read(suffix); err != nil {
		return nil, err
	}
	rt := p.Template.DeepCopy()
	rt.ObjectMeta = metav1.ObjectMeta{Name: id, Namespace: p.Namespace, Labels: maps.Clone(p.Template.Labels), Annotations: maps.Clone(p.Template.Annotations)}
	if rt.Labels == nil {
		rt.Labels = map[string]string{}
	}
	rt.Spec.Shoot.Name = "p-" + hex.EncodeToString(suffix)[:7]
	rt.Labels[LabelProbe] = "true"
	rt.Labels[imv1.LabelRuntimeID], rt.Labels[imv1.LabelKymaName] = id, id
	rt.Labels[imv1.LabelShootName], rt.Labels[imv1.LabelInstanceID] = rt.Spec.Shoot.Name, "probe-"+id
	rt.Status = imv1.RuntimeStatus{}
	return rt, nil
}

// runtimeID is what KEB's runtime IDs look like: a lower-case UUID, also a valid Runtime name and Secret name suffix.
var runtimeID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// ValidateRuntimeIDs checks the probe's runtime IDs: lower-case UUIDs, none twice.
func ValidateRuntimeIDs(ids []string) error {
	for i, id := range ids {
		if !runtimeID.MatchString(id) {
			return fmt.Errorf("runtime ID %q of the probe is not a lower-case UUID", id)
		}
		if slices.Contains(ids[:i], id) {
			return fmt.Errorf("runtime ID %s of the probe is given twice", id)
		}
	}
	return nil
}

// ParseRuntimeIDs reads a comma-separated list of runtime IDs (--runtime-ids); empty is none.
func ParseRuntimeIDs(s string) ([]string, error) {
	var ids []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			ids = append(ids, f)
		}
	}
	if err := ValidateRuntimeIDs(ids); err != nil {
		return nil, fmt.Errorf("--runtime-ids: %w", err)
	}
	return ids, nil
}

func uuid() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	b[6], b[8] = (b[6]&0x0f)|0x40, (b[8]&0x3f)|0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], nil
}

// cleanup reads the Runtime of each of the probe's runtime IDs by name, deletes those an earlier run left (created
// before this run started) and waits until they are gone. It returns the ID to provision under: the first one no
// Runtime held, so that the ID of a failed run, whose cluster may still be being deleted, is not used again at once;
// when every one was left by an earlier run, the first of them. A Runtime created since this run started is another
// run's (`kim probe` by hand next to the CronJob): it is left alone and its ID not used. Without RuntimeIDs there is
// nothing to clean up and the ID is empty (newRuntime draws one).
func (p *Prober) cleanup(ctx context.Context, started time.Time) (string, int, error) {
	var free, cleaned []string
	for _, id := range p.RuntimeIDs {
		rt := &imv1.Runtime{}
		err := p.KCP.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: id}, rt)
		switch {
		case apierrors.IsNotFound(err):
			free = append(free, id)
		case err != nil:
			return "", len(cleaned), fmt.Errorf("read Runtime %s of the probe: %w", id, err)
		case rt.CreationTimestamp.Time.Before(started):
			if err := p.deleteAndWait(ctx, id, p.DeleteTimeout); err != nil {
				return "", len(cleaned), fmt.Errorf("delete Runtime %s of an earlier probe: %w", id, err)
			}
			cleaned = append(cleaned, id)
		}
	}
	if len(p.RuntimeIDs) == 0 {
		return "", 0, nil
	}
	if ids := slices.Concat(free, cleaned); len(ids) > 0 {
		return ids[0], len(cleaned), nil
	}
	return "", 0, fmt.Errorf("every runtime ID of the probe (%s) is held by a Runtime created since this run started: another probe is running",
		strings.Join(p.RuntimeIDs, ", "))
}

// waitReady polls the Runtime as KEB does: Ready (for its generation) is done, Failed is a failure.
func (p *Prober) waitReady(ctx context.Context, name string) error {
	ctx, cancel := context.WithTimeout(ctx, p.ReadyTimeout)
	defer cancel()
	last := "not read yet"
	for {
		rt := &imv1.Runtime{}
		err := p.KCP.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: name}, rt)
		switch {
		case err != nil && ctx.Err() == nil:
			last = err.Error()
		case err == nil && rt.Status.State == imv1.RuntimeStateReady && rt.Status.ObservedGeneration == rt.Generation:
			return nil
		case err == nil && rt.Status.State == imv1.RuntimeStateFailed:
			return fmt.Errorf("the Runtime %s is Failed: %s", name, readyMessage(rt))
		case err == nil:
			if now := fmt.Sprintf("%s: %s", rt.Status.State, readyMessage(rt)); now != last {
				p.progress("Runtime %s: %s", name, now)
				last = now
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the Runtime %s is not Ready after %s (last: %s)", name, p.ReadyTimeout, last)
		case <-time.After(p.PollInterval):
		}
	}
}

func readyMessage(rt *imv1.Runtime) string {
	if c := meta.FindStatusCondition(rt.Status.Conditions, imv1.ConditionReady); c != nil {
		return c.Reason + ": " + c.Message
	}
	return "no Ready condition"
}

// access connects to the runtime with the kubeconfig from the Runtime's Secret and asks who it is.
func (p *Prober) access(ctx context.Context, runtimeID string) (string, error) {
	sec := &corev1.Secret{}
	if err := p.KCP.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: kubeconfig.SecretName(runtimeID)}, sec); err != nil {
		return "", fmt.Errorf("read the kubeconfig Secret: %w", err)
	}
	kc := sec.Data[kubeconfig.SecretKey]
	connect := p.RuntimeClient
	if connect == nil {
		connect = clientset
	}
	cs, err := connect(kc)
	if err != nil {
		return "", fmt.Errorf("the issued kubeconfig: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("the issued kubeconfig does not authenticate at the runtime: %w", err)
	}
	return review.Status.UserInfo.Username, nil
}

func clientset(kc []byte) (kubernetes.Interface, error) {
	cfg, err := kube.RESTConfigFromRuntimeKubeconfig(kc)
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// deleteAndWait deletes the Runtime and polls until it is NotFound, as KEB does.
func (p *Prober) deleteAndWait(ctx context.Context, name string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	rt := &imv1.Runtime{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: name}}
	if err := p.KCP.Delete(ctx, rt); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete Runtime %s: %w", name, err)
	}
	for {
		err := p.KCP.Get(ctx, client.ObjectKeyFromObject(rt), &imv1.Runtime{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the Runtime %s still exists %s after its deletion", name, timeout)
		case <-time.After(p.PollInterval):
		}
	}
}
