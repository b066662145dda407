package sakubeconfig

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Refusals of the access policy. Each is final for the request as it is: a person must change the request (or the
// landscape configuration), retrying changes nothing.
var (
	// ErrEscalation: a rule (or the bound ClusterRole) would let the ServiceAccount gain more than its rules say,
	// or reach Secrets or ServiceAccount tokens (directly, or through workloads and commands in Pods) where the
	// policy does not allow them.
	ErrEscalation = errors.New("privilege escalation refused")
	// ErrInvalid: the request is malformed (admission normally refuses it first).
	ErrInvalid = errors.New("invalid request")
)

// RefusalCode names the kind of a refusal: stable, for tests, metrics and people who match on it (the Ready
// condition's reason stays EscalationRefused or InvalidRequest; the message starts with the refused field).
type RefusalCode string

// Kinds of refusals.
const (
	// CodeEscalatingVerb: the rule names escalate, bind or impersonate, or its wildcards include them on roles,
	// clusterroles, users, groups, serviceaccounts, uids or userextras.
	CodeEscalatingVerb RefusalCode = "EscalatingVerb"
	// CodeEverything: wildcard verbs on wildcard resources.
	CodeEverything RefusalCode = "WildcardEverything"
	// CodeCredentialsClusterWide: Secrets or ServiceAccount tokens cluster-wide (every namespace, the system
	// namespaces included).
	CodeCredentialsClusterWide RefusalCode = "CredentialsClusterWide"
	// CodeCredentialsSystemNamespace: Secrets or ServiceAccount tokens in a system namespace.
	CodeCredentialsSystemNamespace RefusalCode = "CredentialsInSystemNamespace"
	// CodeCredentialsOtherNamespace: Secrets or ServiceAccount tokens outside the ServiceAccount's own namespace
	// without the landscape's allowance.
	CodeCredentialsOtherNamespace RefusalCode = "CredentialsOutsideOwnNamespace"
	// CodeWorkloadsClusterWide: creating or changing workloads (Pods and the resources whose controllers create
	// Pods), or running commands in Pods (pods/exec, pods/attach, pods/ephemeralcontainers), cluster-wide. A Pod
	// runs as any ServiceAccount of its namespace, so this reaches the same tokens as the credential codes.
	CodeWorkloadsClusterWide RefusalCode = "WorkloadsClusterWide"
	// CodeWorkloadsSystemNamespace: workloads or commands in Pods in a system namespace.
	CodeWorkloadsSystemNamespace RefusalCode = "WorkloadsInSystemNamespace"
	// CodeWorkloadsOtherNamespace: workloads or commands in Pods outside the ServiceAccount's own namespace without
	// the landscape's allowance.
	CodeWorkloadsOtherNamespace RefusalCode = "WorkloadsOutsideOwnNamespace"
	// CodeAggregatedClusterRole: the bound ClusterRole has an aggregationRule.
	CodeAggregatedClusterRole RefusalCode = "AggregatedClusterRole"
	// CodeNonResourceURL: a non-resource URL rule of the bound ClusterRole writes, or reaches /logs or /debug.
	CodeNonResourceURL RefusalCode = "NonResourceURL"
	// CodeInvalid: the request is malformed.
	CodeInvalid RefusalCode = "Invalid"
)

// Refusal says which part of a request is refused and why. It wraps ErrEscalation or ErrInvalid.
type Refusal struct {
	// Field is the path of the refused part, e.g. spec.rules[1].
	Field string
	// Code is the kind of refusal.
	Code RefusalCode
	// Detail explains the refusal in words.
	Detail string
	kind   error
}

func (r *Refusal) Error() string { return r.Field + ": " + r.Detail }

// Unwrap returns ErrEscalation or ErrInvalid.
func (r *Refusal) Unwrap() error { return r.kind }

// DefaultSystemNamespaces are the runtime namespaces in which no request may reach Secrets or ServiceAccount tokens,
// nor write workloads or run commands in Pods, when the landscape names none: kube-system holds the controllers' ServiceAccounts (garbage collector, ClusterRole
// aggregation, namespace controller), whose tokens are as good as cluster-admin; kube-public is readable by
// everyone; kyma-system holds Kyma's operators and their credentials.
var DefaultSystemNamespaces = []string{"kube-system", "kube-public", "kyma-system"}

// AccessPolicy is the landscape's part of the no-escalation policy.
type AccessPolicy struct {
	// ClusterWideSecretsNamespaces are the KCP namespaces whose requests may reach Secrets and ServiceAccount
	// tokens, and write workloads and run commands in Pods (which reach the same), in runtime namespaces other than
	// the ServiceAccount's own, by naming them. Never in a system
	// namespace, and so never cluster-wide (a cluster-wide rule reaches kube-system). Empty: none may.
	ClusterWideSecretsNamespaces []string
	// SystemNamespaces are the runtime namespaces in which Secrets and ServiceAccount tokens, workloads and
	// commands in Pods are refused to every request, the ServiceAccount's own namespace included. Nil: DefaultSystemNamespaces. kube-system is one
	// whatever the list says.
	SystemNamespaces []string
	// AllowedPowers names, per KCP namespace, the cluster powers (Powers: NodePowers, AdmissionControl, ...) its
	// requests may hold. Empty: none may.
	AllowedPowers map[string][]RefusalCode
	// SharedNamespaces are the runtime namespaces in which requests may reach Secrets, ServiceAccount tokens and
	// workloads although the operator did not create them for the request (never a system namespace). Everywhere
	// else these are allowed only in a namespace the operator created for the request (NamespaceClaims).
	SharedNamespaces []string
}

// System reports whether ns is a system namespace of the policy.
func (p AccessPolicy) System(ns string) bool {
	list := p.SystemNamespaces
	if list == nil {
		list = DefaultSystemNamespaces
	}
	return ns == "kube-system" || slices.Contains(list, ns)
}

// Verbs that grant more than a rule lists: escalate and bind create or bind roles with permissions the ServiceAccount
// does not hold, impersonate acts as someone else. Refused by name in any case (RBAC's verbs are case-sensitive, so
// "Bind" grants nothing: refusing it anyway keeps a typo from looking accepted).
var escalatingVerbs = []string{"escalate", "bind", "impersonate"}

const (
	groupRBAC           = "rbac.authorization.k8s.io"
	groupAuthentication = "authentication.k8s.io"
	groupApps           = "apps"
	groupBatch          = "batch"
)

// workloadWrites are the verbs that create a workload or change what its Pods run: create names any
// serviceAccountName of the namespace; update and patch (server-side apply included) change a controller's Pod
// template, service account included, or a Pod's image (the new image runs with the Pod's token mounted).
var workloadWrites = []string{"create", "update", "patch"}

// writesOf lists the workloadWrites on each resource of group.
func writesOf(group string, resources ...string) []action {
	var out []action
	for _, res := range resources {
		for _, v := range workloadWrites {
			out = append(out, action{verb: v, group: group, resource: res})
		}
	}
	return out
}

var (
	// roleActions are the requests RBAC's escalation check authorizes: creating or binding a role with
	// permissions the requester does not hold. Refused everywhere.
	roleActions = []action{
		{verb: "escalate", group: groupRBAC, resource: "roles"}, {verb: "escalate", group: groupRBAC, resource: "clusterroles"},
		{verb: "bind", group: groupRBAC, resource: "roles"}, {verb: "bind", group: groupRBAC, resource: "clusterroles"},
	}
	// impersonationActions are the requests the impersonation filter authorizes. Refused everywhere.
	impersonationActions = []action{
		{verb: "impersonate", resource: "users"}, {verb: "impersonate", resource: "groups"},
		{verb: "impersonate", resource: "serviceaccounts"},
		{verb: "impersonate", group: groupAuthentication, resource: "uids"},
		{verb: "impersonate", group: groupAuthentication, resource: "userextras", anySubresource: true},
	}
	// credentialActions hold or mint credentials of other identities, with any verb: Secrets (reading them, or
	// creating a service-account-token Secret the token controller fills), and TokenRequests of any ServiceAccount
	// (create serviceaccounts/token). Refused outside the ServiceAccount's own namespace and in system namespaces.
	credentialActions = []action{
		{resource: "secrets"},
		{resource: "serviceaccounts", subresource: "token"},
	}
	// workloadActions run code as any ServiceAccount of the namespace, and so reach its tokens and Secrets
	// (Kubernetes' RBAC good practices, "Workload creation"): writing Pods or the built-in workload resources whose
	// controllers create Pods from a template, and running a command in a running Pod. pods/exec and pods/attach
	// with any verb: a WebSocket connection (kubectl since 1.30) is authorized as get, and only API servers from 1.35
	// with the AuthorizePodWebsocketUpgradeCreatePermission gate also require create. pods/ephemeralcontainers adds
	// a container, with a command of the writer's choice, to a running Pod. pods/portforward is no such action: it
	// reaches a Pod's ports, not its processes or files. Refused where credentialActions are.
	workloadActions = slices.Concat(
		writesOf("", "pods", "replicationcontrollers"),
		writesOf(groupApps, "deployments", "replicasets", "statefulsets", "daemonsets"),
		writesOf(groupBatch, "jobs", "cronjobs"),
		[]action{{resource: "pods", subresource: "exec"}, {resource: "pods", subresource: "attach"}},
		[]action{
			{verb: "create", resource: "pods", subresource: "ephemeralcontainers"},
			{verb: "update", resource: "pods", subresource: "ephemeralcontainers"},
			{verb: "patch", resource: "pods", subresource: "ephemeralcontainers"},
		},
	)
)

// reach is a class of actions that reach the credentials of a namespace's ServiceAccounts, refused cluster-wide,
// in system namespaces and outside the ServiceAccount's own namespace; with its words and codes.
type reach struct {
	actions []action
	// what names the class for a rule; whyCluster, whySystem and whyOther say how it reaches beyond, cluster-wide,
	// in a system namespace, in another namespace (whyOther ends in "; " when not empty).
	what                            func(Rule) string
	whyCluster, whySystem, whyOther string
	clusterWide, system, other      RefusalCode
	// existing is the code of a claim of a namespace that was not created for the request (NamespaceClaims).
	existing RefusalCode
}

var reaches = []reach{
	{
		actions: credentialActions,
		what: func(r Rule) string {
			return fmt.Sprintf("Secrets and ServiceAccount tokens (resources %v in API groups %q)", r.Resources, r.APIGroups)
		},
		whyCluster:  "that includes the system namespaces, whose controllers' tokens are cluster-admin",
		whySystem:   "its ServiceAccounts' tokens and Secrets reach beyond it",
		clusterWide: CodeCredentialsClusterWide, system: CodeCredentialsSystemNamespace, other: CodeCredentialsOtherNamespace,
		existing: CodeCredentialsExistingNamespace,
	},
	{
		actions: workloadActions,
		what: func(r Rule) string {
			return fmt.Sprintf("workloads and commands in Pods (verbs %v on resources %v in API groups %q; that is writing pods or the workloads that create them, or pods/exec, pods/attach, pods/ephemeralcontainers)", r.Verbs, r.Resources, r.APIGroups)
		},
		whyCluster:  "a Pod runs as any ServiceAccount of its namespace, in kube-system as a controller whose token is cluster-admin",
		whySystem:   "a Pod there runs as any of its ServiceAccounts, whose tokens reach beyond it",
		whyOther:    "a Pod there runs as any ServiceAccount of that namespace; ",
		clusterWide: CodeWorkloadsClusterWide, system: CodeWorkloadsSystemNamespace, other: CodeWorkloadsOtherNamespace,
		existing: CodeWorkloadsExistingNamespace,
	},
}

// Non-resource URL rules of a bound ClusterRole (effective only when it is bound cluster-wide) may read
// (get, head) anything but the API server's log files and debug endpoints (profiles, flags).
var (
	nonResourceVerbs    = []string{"get", "head"}
	nonResourceRefusals = []string{"/logs", "/debug"}
)

// CheckRequest refuses a request the policy does not allow: malformed parts (ErrInvalid) and rules that escalate
// (ErrEscalation). The error is a *Refusal naming the first refused rule; a nil error means every rule is allowed.
// A bound ClusterRole is checked separately by CheckClusterRole, once its rules are known.
func (p AccessPolicy) CheckRequest(req Request) error {
	if err := checkShape(req); err != nil {
		return err
	}
	for i, r := range req.Rules {
		if code, msg := p.ruleProblem(req, r, r.Namespaces); msg != "" {
			return &Refusal{Field: fmt.Sprintf("spec.rules[%d]", i), Code: code, Detail: msg, kind: ErrEscalation}
		}
	}
	return nil
}

// ClusterRole is a runtime's ClusterRole as the policy judges it.
type ClusterRole struct {
	// Rules as the runtime holds them now (their Namespaces are not used).
	Rules []Rule
	// Aggregated: the ClusterRole has an aggregationRule. The runtime's aggregation controller replaces its rules
	// with those of every ClusterRole its selectors match, at any time, so what is checked now says nothing about
	// what it grants a minute later.
	Aggregated bool
}

// CheckClusterRole refuses binding the ClusterRole req.ClusterRole names when it is aggregated, or when its rules
// (as the runtime holds them) escalate where they are bound: the same policy as for the request's own rules, and
// for a cluster-wide binding also its non-resource URL rules.
func (p AccessPolicy) CheckClusterRole(req Request, role ClusterRole) error {
	ref := req.ClusterRole
	if ref == nil {
		return nil
	}
	refuse := func(code RefusalCode, format string, args ...any) error {
		return &Refusal{Field: "spec.clusterRole", Code: code, kind: ErrEscalation, Detail: fmt.Sprintf(format, args...)}
	}
	if role.Aggregated {
		return refuse(CodeAggregatedClusterRole, "ClusterRole %s is aggregated (it has an aggregationRule): its rules grow with every ClusterRole its selectors match, after any check; bind a ClusterRole with rules of its own, or name the rules in spec.rules", ref.Name)
	}
	for i, r := range role.Rules {
		if len(r.NonResourceURLs) > 0 && len(ref.Namespaces) == 0 {
			if msg := nonResourceProblem(r); msg != "" {
				return refuse(CodeNonResourceURL, "ClusterRole %s rule %d (verbs %v on non-resource URLs %v): %s", ref.Name, i, r.Verbs, r.NonResourceURLs, msg)
			}
		}
		if len(r.Resources) == 0 {
			continue
		}
		if code, msg := p.ruleProblem(req, r, ref.Namespaces); msg != "" {
			return refuse(code, "ClusterRole %s rule %d (%s): %s", ref.Name, i, describeRule(r), msg)
		}
	}
	return nil
}

// nonResourceProblem says why a non-resource URL rule is refused ("" when it is not).
func nonResourceProblem(r Rule) string {
	for _, v := range r.Verbs {
		if !slices.Contains(nonResourceVerbs, v) {
			return fmt.Sprintf("verb %q is refused on non-resource URLs: only get and head are allowed", v)
		}
	}
	for _, u := range r.NonResourceURLs {
		for _, s := range nonResourceRefusals {
			if urlReaches(u, s) {
				return fmt.Sprintf("URL %q reaches %s, which is refused (the API server's logs and debug endpoints)", u, s)
			}
		}
	}
	return ""
}

// ruleProblem says why r, applying in namespaces (nil: cluster-wide), is refused for req ("" when it is not).
func (p AccessPolicy) ruleProblem(req Request, r Rule, namespaces []string) (RefusalCode, string) {
	for _, v := range r.Verbs {
		if slices.Contains(escalatingVerbs, strings.ToLower(v)) {
			return CodeEscalatingVerb, fmt.Sprintf("verb %q is refused: it lets the ServiceAccount grant itself or act with permissions beyond its rules", v)
		}
	}
	if slices.Contains(r.Verbs, "*") && slices.Contains(r.Resources, "*") {
		return CodeEverything, `wildcard verbs on wildcard resources are refused: name the resources and verbs the component needs`
	}
	if slices.ContainsFunc(roleActions, r.covers) {
		return CodeEscalatingVerb, fmt.Sprintf("verbs %v on %v in API groups %q include escalate and bind on roles or clusterroles, which are refused: list the verbs", r.Verbs, r.Resources, r.APIGroups)
	}
	if slices.ContainsFunc(impersonationActions, r.covers) {
		return CodeEscalatingVerb, fmt.Sprintf("verbs %v on %v in API groups %q include impersonate, which is refused: list the verbs", r.Verbs, r.Resources, r.APIGroups)
	}
	for _, c := range reaches {
		if slices.ContainsFunc(c.actions, r.covers) {
			if code, msg := p.namespaceProblem(req, namespaces, c, c.what(r)); msg != "" {
				return code, msg
			}
		}
	}
	return p.powerProblem(req, r, namespaces)
}

// namespaceProblem says why a rule of class c, applying in namespaces (nil: cluster-wide), is refused for req
// ("" when it is not): cluster-wide, in a system namespace, or outside the ServiceAccount's own namespace without
// the landscape's allowance for the requesting KCP namespace.
func (p AccessPolicy) namespaceProblem(req Request, namespaces []string, c reach, what string) (RefusalCode, string) {
	own := req.ServiceAccount.Namespace
	if len(namespaces) == 0 {
		return c.clusterWide, what + " cluster-wide are refused: " + c.whyCluster + "; name the namespaces (the ServiceAccount's own, " + strconv.Quote(own) + ")"
	}
	for _, ns := range namespaces {
		switch {
		case p.System(ns):
			return c.system, fmt.Sprintf("%s in system namespace %q are refused, to every request: %s", what, ns, c.whySystem)
		case ns != own && !slices.Contains(p.ClusterWideSecretsNamespaces, req.Owner.Namespace):
			return c.other, fmt.Sprintf("%s in namespace %q, outside the ServiceAccount's namespace %q, are refused: %s"+
				"allow KCP namespace %q in serviceAccountKubeconfigs.clusterWideSecretsNamespaces of the landscape configuration", what, ns, own, c.whyOther, req.Owner.Namespace)
		}
	}
	return "", ""
}

func describeRule(r Rule) string {
	return fmt.Sprintf("verbs %v on %v in API groups %q", r.Verbs, r.Resources, r.APIGroups)
}

// checkShape refuses what admission normally refuses already: the operator never acts on a malformed request.
func checkShape(req Request) error {
	invalid := func(field, format string, args ...any) error {
		return &Refusal{Field: field, Code: CodeInvalid, Detail: fmt.Sprintf(format, args...), kind: ErrInvalid}
	}
	switch {
	case req.RuntimeID == "":
		return invalid("spec.runtimeID", "must not be empty")
	case req.ServiceAccount.Name == "" || req.ServiceAccount.Namespace == "":
		return invalid("spec.serviceAccount", "name and namespace must not be empty")
	case req.SecretName == "":
		return invalid("spec.secretName", "must not be empty")
	case req.Validity < MinValidity || req.Validity > MaxValidity:
		return invalid("spec.validity", "%s is outside [%s, %s]", req.Validity, MinValidity, MaxValidity)
	case len(req.Rules) == 0 && req.ClusterRole == nil:
		return invalid("spec", "at least one rule or a clusterRole is required")
	case req.ClusterRole != nil && req.ClusterRole.Name == "":
		return invalid("spec.clusterRole.name", "must not be empty")
	}
	for i, r := range req.Rules {
		if len(r.Verbs) == 0 || len(r.Resources) == 0 || len(r.APIGroups) == 0 {
			return invalid(fmt.Sprintf("spec.rules[%d]", i), "apiGroups, resources and verbs must not be empty")
		}
		if slices.Contains(r.Namespaces, "") {
			return invalid(fmt.Sprintf("spec.rules[%d].namespaces", i), "must not contain an empty name")
		}
	}
	return checkSecretName(req.SecretName)
}
