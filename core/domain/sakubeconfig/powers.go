package sakubeconfig

import (
	"fmt"
	"slices"
	"strings"
)

// Cluster powers: rules that reach cluster-admin by another road than escalate, bind, impersonate or the tokens of
// the system namespaces. Each is refused by default, whatever the namespaces of the rule (where it has an effect at
// all), unless the landscape allows it to the requesting KCP namespace (AccessPolicy.AllowedPowers). The refusal
// codes double as the names the landscape allows them by.
const (
	// CodePowerNodes: nodes/proxy with any verb (the kubelet's API: exec, attach and logs of every Pod on the node,
	// kube-system's included, and a WebSocket exec is authorized as get), or writing nodes and nodes/status (taints
	// and labels steer Pods, a node object may be replaced by one of the writer's choice).
	CodePowerNodes RefusalCode = "NodePowers"
	// CodePowerAdmission: writing (deleting included) webhook configurations or admission policies and their
	// bindings: a mutating webhook sees and changes every object written, Secrets and Pod specs included; deleting a
	// validating one removes a guard.
	CodePowerAdmission RefusalCode = "AdmissionControl"
	// CodePowerCertificateSigning: approving CertificateSigningRequests (certificatesigningrequests/approval),
	// writing their status (the issued certificate), or the approve and sign verbs on signers: a client
	// certificate for system:masters is cluster-admin, with no RBAC in its way.
	CodePowerCertificateSigning RefusalCode = "CertificateSigning"
	// CodePowerAPIRegistration: writing APIServices (an aggregated API server of the writer's choice receives the
	// requests for its group, credentials included) or CustomResourceDefinitions (conversion webhooks see every
	// object of the kind; deleting one deletes every object of it).
	CodePowerAPIRegistration RefusalCode = "APIRegistration"
	// CodePowerPersistentVolumes: creating PersistentVolumes: a hostPath volume mounts a node's root file system,
	// the kubelet's credentials and every Pod's token on it, into any Pod that claims it.
	CodePowerPersistentVolumes RefusalCode = "PersistentVolumeCreation"
	// CodePowerNamespaces: updating, patching or deleting namespaces (their status and finalizers included): a
	// namespace's Pod Security labels decide whether privileged Pods may run in it, and a namespace deleted and
	// created again would lose what marks it as not created for a request. Effective in a namespace too: a
	// RoleBinding grants writes of its own namespace object.
	CodePowerNamespaces RefusalCode = "NamespaceWrites"
)

// objectWrites are the verbs that create, change or delete an object.
var objectWrites = []string{"create", "update", "patch", "delete", "deletecollection"}

// writes lists each of verbs on each resource of group.
func writes(group string, verbs []string, resources ...string) []action {
	var out []action
	for _, res := range resources {
		for _, v := range verbs {
			out = append(out, actionOf(v, group, res))
		}
	}
	return out
}

// actionOf is the action verb on group/resource, where resource may name a subresource (nodes/proxy).
func actionOf(verb, group, resource string) action {
	res, sub, _ := strings.Cut(resource, "/")
	return action{verb: verb, group: group, resource: res, subresource: sub}
}

// power is one class of cluster powers.
type power struct {
	code RefusalCode
	// actions the class holds; namespaced: a Role grants them too (otherwise only a cluster-wide rule does: the
	// resources are cluster-scoped and a RoleBinding never reaches them).
	actions    []action
	namespaced bool
	// why says what the class reaches.
	why string
}

const (
	groupAdmission     = "admissionregistration.k8s.io"
	groupCertificates  = "certificates.k8s.io"
	groupAPIRegistry   = "apiregistration.k8s.io"
	groupAPIExtensions = "apiextensions.k8s.io"
)

var powers = []power{
	{code: CodePowerNodes, why: "the kubelet's API runs commands in every Pod of a node, kube-system's included, and node objects steer where Pods run",
		actions: slices.Concat([]action{{resource: "nodes", subresource: "proxy"}}, writes("", objectWrites, "nodes", "nodes/status"))},
	{code: CodePowerAdmission, why: "an admission webhook sees and changes every object written, Secrets and Pod specs included, and removing one removes a guard",
		actions: writes(groupAdmission, objectWrites, "mutatingwebhookconfigurations", "validatingwebhookconfigurations",
			"validatingadmissionpolicies", "validatingadmissionpolicybindings", "mutatingadmissionpolicies", "mutatingadmissionpolicybindings")},
	{code: CodePowerCertificateSigning, why: "an approved CertificateSigningRequest for group system:masters is a cluster-admin certificate that no RBAC rule limits",
		actions: slices.Concat(writes(groupCertificates, []string{"update", "patch"}, "certificatesigningrequests/approval", "certificatesigningrequests/status"),
			writes(groupCertificates, []string{"approve", "sign"}, "signers"))},
	{code: CodePowerAPIRegistration, why: "an APIService sends the requests of its group to a server of the writer's choice, and a CustomResourceDefinition's conversion webhook sees every object of its kind",
		actions: slices.Concat(writes(groupAPIRegistry, objectWrites, "apiservices", "apiservices/status"),
			writes(groupAPIExtensions, objectWrites, "customresourcedefinitions", "customresourcedefinitions/status"))},
	{code: CodePowerPersistentVolumes, why: "a hostPath PersistentVolume mounts a node's file system, with the kubelet's credentials and every Pod's token on it",
		actions: []action{{verb: "create", resource: "persistentvolumes"}}},
	{code: CodePowerNamespaces, namespaced: true, why: "a namespace's Pod Security labels decide whether privileged Pods may run in it, and one deleted and created again loses the mark that it was not created for the request",
		actions: writes("", []string{"update", "patch", "delete", "deletecollection"}, "namespaces", "namespaces/status", "namespaces/finalize")},
}

// Powers lists the codes of the cluster powers, the names AccessPolicy.AllowedPowers accepts.
func Powers() []RefusalCode {
	out := make([]RefusalCode, 0, len(powers))
	for _, p := range powers {
		out = append(out, p.code)
	}
	return out
}

// powerProblem says why r, applying in namespaces (nil: cluster-wide), reaches a cluster power the landscape does
// not allow the requesting KCP namespace ("" when it reaches none).
func (p AccessPolicy) powerProblem(req Request, r Rule, namespaces []string) (RefusalCode, string) {
	for _, pw := range powers {
		if len(namespaces) > 0 && !pw.namespaced {
			continue
		}
		if !slices.ContainsFunc(pw.actions, r.covers) || slices.Contains(p.AllowedPowers[req.Owner.Namespace], pw.code) {
			continue
		}
		return pw.code, fmt.Sprintf("%s reach %s, which is refused: %s; name the resources and verbs the component needs, or allow %s to KCP namespace %q in serviceAccountKubeconfigs.allowedPowers of the landscape configuration",
			describeRule(r), pw.code, pw.why, pw.code, req.Owner.Namespace)
	}
	return "", ""
}
