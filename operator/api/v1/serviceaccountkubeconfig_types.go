package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ServiceAccountKubeconfigState is the coarse state of a ServiceAccountKubeconfig.
type ServiceAccountKubeconfigState string

const (
	// ServiceAccountKubeconfigStatePending means no kubeconfig was issued yet (the runtime is not reachable yet).
	ServiceAccountKubeconfigStatePending ServiceAccountKubeconfigState = "Pending"
	// ServiceAccountKubeconfigStateReady means the runtime holds the ServiceAccount with exactly the requested
	// permissions and the Secret a valid kubeconfig of it.
	ServiceAccountKubeconfigStateReady ServiceAccountKubeconfigState = "Ready"
	// ServiceAccountKubeconfigStateError means the request is refused or the last attempt failed; see the Ready
	// condition.
	ServiceAccountKubeconfigStateError ServiceAccountKubeconfigState = "Error"
	// ServiceAccountKubeconfigStateDeleting means the runtime objects and the Secret are being removed.
	ServiceAccountKubeconfigStateDeleting ServiceAccountKubeconfigState = "Deleting"
)

// ServiceAccountKubeconfig is a least-privilege kubeconfig for one control-plane component in one runtime: the
// operator keeps a ServiceAccount in the runtime with exactly the permissions the rules name (a Role or
// ClusterRole and bindings, field manager kim), issues short-lived tokens of it with the TokenRequest API, and
// keeps the Secret spec.secretName (key config) filled with a kubeconfig of it, rotated before expiry and on
// demand (annotation operator.kyma-project.io/force-kubeconfig-rotation: "true"). Deleting it removes the
// ServiceAccount, roles, bindings and Secret. Requests that would escalate (escalate, bind, impersonate, wildcard
// verbs on wildcard resources, Secrets, ServiceAccount tokens and workloads outside the ServiceAccount's namespace, in
// a system namespace or in a namespace the operator did not create for the request, node, admission,
// certificate-signing, API-registration, PersistentVolume and namespace-write powers the landscape does not allow,
// aggregated ClusterRoles) are refused.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=sak,categories=kim
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="Runtime",type=string,JSONPath=`.spec.runtimeID`
// +kubebuilder:printcolumn:name="ServiceAccount",type=string,JSONPath=`.spec.serviceAccount.name`
// +kubebuilder:printcolumn:name="SA-Namespace",type=string,JSONPath=`.spec.serviceAccount.namespace`
// +kubebuilder:printcolumn:name="Secret",type=string,JSONPath=`.spec.secretName`
// +kubebuilder:printcolumn:name="Expires",type=date,JSONPath=`.status.expiresAt`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1,description="Reason of the Ready condition"
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1,description="Message of the Ready condition"
type ServiceAccountKubeconfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec names the runtime, the ServiceAccount, its permissions and the Secret.
	Spec ServiceAccountKubeconfigSpec `json:"spec"`
	// Status reports what the operator did.
	// +optional
	Status ServiceAccountKubeconfigStatus `json:"status,omitempty"`
}

// ServiceAccountKubeconfigList is a list of ServiceAccountKubeconfigs.
//
// +kubebuilder:object:root=true
type ServiceAccountKubeconfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ServiceAccountKubeconfig `json:"items"`
}

// ServiceAccountKubeconfigSpec is what a control-plane component asks for.
//
// +kubebuilder:validation:XValidation:rule="(has(self.rules) && size(self.rules) > 0) || has(self.clusterRole)",message="spec: at least one of rules and clusterRole is required"
type ServiceAccountKubeconfigSpec struct {
	// RuntimeID is the runtime (the name of its Runtime and GardenerCluster in this namespace). The operator reaches
	// it through the admin kubeconfig Secret kubeconfig-<runtimeID> of this namespace. Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.runtimeID is immutable: create another ServiceAccountKubeconfig"
	RuntimeID string `json:"runtimeID"`
	// ServiceAccount is the identity in the runtime; the operator creates it (and its namespace if missing) and
	// refuses one it did not create. Immutable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.serviceAccount is immutable: create another ServiceAccountKubeconfig"
	ServiceAccount ServiceAccountReference `json:"serviceAccount"`
	// Rules are the permissions, each cluster-wide or in the namespaces it lists. Changes take effect in place;
	// the kubeconfig stays valid.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	Rules []AccessRule `json:"rules,omitempty"`
	// ClusterRole binds an existing ClusterRole of the runtime as well. Its rules are checked against the same
	// policy as Rules whenever the operator applies the request and every 10 minutes while it holds it; an
	// aggregated ClusterRole is refused.
	// +optional
	ClusterRole *ClusterRoleReference `json:"clusterRole,omitempty"`
	// Validity of each token, between 10m and 168h (default 24h). A token is replaced after 60% of it (jittered).
	// +optional
	// +kubebuilder:default="24h"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('10m') && duration(self) <= duration('168h')",message="spec.validity must be between 10m (the TokenRequest minimum) and 168h"
	Validity *metav1.Duration `json:"validity,omitempty"`
	// SecretName is the Secret in this namespace that receives the kubeconfig under key config. The operator
	// refuses a Secret it did not write for this object, any kubeconfig-* name (the admin kubeconfig Secrets of
	// runtimes, of every runtime, not only this one's) and any kim-* name (Secrets the operator itself may create).
	// Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('kubeconfig-')",message="kubeconfig-* names are the admin kubeconfig Secrets of runtimes; choose another name"
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('kim-')",message="kim-* names are Secrets the operator itself may create; choose another name"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.secretName is immutable: create another ServiceAccountKubeconfig"
	SecretName string `json:"secretName"`
}

// ServiceAccountReference names a ServiceAccount in a runtime.
type ServiceAccountReference struct {
	// Namespace of the ServiceAccount in the runtime.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace"`
	// Name of the ServiceAccount.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	Name string `json:"name"`
}

// AccessRule is one permission: an RBAC policy rule, cluster-wide or in the listed namespaces.
//
// +kubebuilder:validation:XValidation:rule="!self.verbs.exists(v, v.lowerAscii() in ['escalate', 'bind', 'impersonate'])",messageExpression="'verb \"' + self.verbs.filter(v, v.lowerAscii() in ['escalate', 'bind', 'impersonate'])[0] + '\" is refused: escalate, bind and impersonate let the ServiceAccount grant itself, or act with, permissions beyond its rules'"
// +kubebuilder:validation:XValidation:rule="!('*' in self.verbs && '*' in self.resources)",message="wildcard verbs on wildcard resources are refused: name the resources and verbs the component needs"
// +kubebuilder:validation:XValidation:rule="!('*' in self.verbs && self.apiGroups.exists(g, g in ['rbac.authorization.k8s.io', '*']) && ['roles', 'clusterroles'].exists(b, self.resources.exists(r, r == b || r.startsWith(b + '/'))))",message="wildcard verbs on roles or clusterroles include escalate and bind, which are refused: list the verbs"
// +kubebuilder:validation:XValidation:rule="!('*' in self.verbs && ((self.apiGroups.exists(g, size(g) == 0 || g == '*') && ['users', 'groups', 'serviceaccounts'].exists(b, self.resources.exists(r, r == b || r.startsWith(b + '/')))) || (self.apiGroups.exists(g, g in ['authentication.k8s.io', '*']) && self.resources.exists(r, r == 'uids' || r.startsWith('uids/') || r == 'userextras' || r.startsWith('userextras/') || (r.startsWith('*/') && size(r) > 2)))))",message="wildcard verbs on users, groups, serviceaccounts, uids or userextras (a */<key> resource is a subresource wildcard that includes userextras/<key>) include impersonate, which is refused: list the verbs"
// +kubebuilder:validation:XValidation:rule="!((!has(self.namespaces) || size(self.namespaces) == 0) && self.apiGroups.exists(g, size(g) == 0 || g == '*') && self.resources.exists(r, r in ['*', 'secrets', 'serviceaccounts/token', '*/token']))",message="Secrets and ServiceAccount tokens cluster-wide (resources *, secrets, serviceaccounts/token or */token in the core group without namespaces) are refused: that includes kube-system, whose controllers' tokens are cluster-admin; name the ServiceAccount's own namespace"
// +kubebuilder:validation:XValidation:rule="!(has(self.namespaces) && 'kube-system' in self.namespaces && self.apiGroups.exists(g, size(g) == 0 || g == '*') && self.resources.exists(r, r in ['*', 'secrets', 'serviceaccounts/token', '*/token']))",message="Secrets and ServiceAccount tokens in kube-system (resources *, secrets, serviceaccounts/token or */token in the core group) are refused: its controllers' tokens are cluster-admin"
// +kubebuilder:validation:XValidation:rule="!((!has(self.namespaces) || size(self.namespaces) == 0) && ((self.apiGroups.exists(g, size(g) == 0 || g == '*') && (self.resources.exists(r, r in ['*', 'pods/exec', 'pods/attach', '*/exec', '*/attach']) || (self.verbs.exists(v, v in ['*', 'create', 'update', 'patch']) && self.resources.exists(r, r in ['pods', 'replicationcontrollers', 'pods/ephemeralcontainers', '*/ephemeralcontainers'])))) || (self.verbs.exists(v, v in ['*', 'create', 'update', 'patch']) && ((self.apiGroups.exists(g, g in ['apps', '*']) && self.resources.exists(r, r in ['*', 'deployments', 'replicasets', 'statefulsets', 'daemonsets'])) || (self.apiGroups.exists(g, g in ['batch', '*']) && self.resources.exists(r, r in ['*', 'jobs', 'cronjobs']))))))",message="workloads and commands in Pods cluster-wide (create, update or patch of pods, replicationcontrollers, deployments, replicasets, statefulsets, daemonsets, jobs, cronjobs or pods/ephemeralcontainers, any verb on pods/exec or pods/attach; * and */<sub> included) are refused: a Pod runs as any ServiceAccount of its namespace, in kube-system as a controller whose token is cluster-admin; name the ServiceAccount's own namespace"
// +kubebuilder:validation:XValidation:rule="!(has(self.namespaces) && 'kube-system' in self.namespaces && ((self.apiGroups.exists(g, size(g) == 0 || g == '*') && (self.resources.exists(r, r in ['*', 'pods/exec', 'pods/attach', '*/exec', '*/attach']) || (self.verbs.exists(v, v in ['*', 'create', 'update', 'patch']) && self.resources.exists(r, r in ['pods', 'replicationcontrollers', 'pods/ephemeralcontainers', '*/ephemeralcontainers'])))) || (self.verbs.exists(v, v in ['*', 'create', 'update', 'patch']) && ((self.apiGroups.exists(g, g in ['apps', '*']) && self.resources.exists(r, r in ['*', 'deployments', 'replicasets', 'statefulsets', 'daemonsets'])) || (self.apiGroups.exists(g, g in ['batch', '*']) && self.resources.exists(r, r in ['*', 'jobs', 'cronjobs']))))))",message="workloads and commands in Pods in kube-system (create, update or patch of pods, replicationcontrollers, deployments, replicasets, statefulsets, daemonsets, jobs, cronjobs or pods/ephemeralcontainers, any verb on pods/exec or pods/attach; * and */<sub> included) are refused: a Pod there runs as any of its ServiceAccounts, the controllers' among them, whose tokens are cluster-admin"
type AccessRule struct {
	// Namespaces the rule applies in (a Role and RoleBinding in each); empty means cluster-wide (a ClusterRole and
	// ClusterRoleBinding). Missing namespaces are created in the runtime.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +listType=set
	Namespaces []string `json:"namespaces,omitempty"`
	// APIGroups as in an RBAC rule ("" is the core group).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=253
	// +listType=atomic
	APIGroups []string `json:"apiGroups"`
	// Resources as in an RBAC rule (resource or resource/subresource).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	// +listType=atomic
	Resources []string `json:"resources"`
	// ResourceNames restricts the rule to these objects.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=253
	// +listType=atomic
	ResourceNames []string `json:"resourceNames,omitempty"`
	// Verbs as in an RBAC rule.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=63
	// +listType=atomic
	Verbs []string `json:"verbs"`
}

// ClusterRoleReference binds an existing ClusterRole of the runtime to the ServiceAccount.
type ClusterRoleReference struct {
	// Name of the ClusterRole in the runtime.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self != 'cluster-admin'",message="cluster-admin is refused: name the permissions the component needs in rules"
	// +kubebuilder:validation:XValidation:rule="!(self in ['admin', 'edit', 'view'])",message="admin, edit and view are aggregated ClusterRoles (their rules grow with every ClusterRole labelled to aggregate into them) and are refused: name the permissions in rules, or bind a ClusterRole with rules of its own"
	Name string `json:"name"`
	// Namespaces to bind the ClusterRole in (a RoleBinding in each); empty binds it cluster-wide.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +listType=set
	Namespaces []string `json:"namespaces,omitempty"`
}

// ServiceAccountKubeconfigStatus reports the identity and its kubeconfig.
type ServiceAccountKubeconfigStatus struct {
	// State is Ready when the runtime holds the identity and the Secret a valid kubeconfig of it.
	// +optional
	// +kubebuilder:validation:Enum=Pending;Ready;Error;Deleting
	State ServiceAccountKubeconfigState `json:"state,omitempty"`
	// Conditions: Ready (the kstatus convention, so `kubectl wait --for=condition=Ready` works) with a stable reason.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ObservedGeneration is the generation whose rules are applied in the runtime (or refused).
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// SecretName is the Secret that holds the kubeconfig, once written.
	// +optional
	SecretName string `json:"secretName,omitempty"`
	// ExpiresAt is when the token in the Secret expires.
	// +optional
	ExpiresAt *metav1.Time `json:"expiresAt,omitempty"`
	// RuntimeObjects are the objects the operator keeps in the runtime for this request (removed with it).
	// +optional
	// +listType=atomic
	RuntimeObjects []RuntimeObjectReference `json:"runtimeObjects,omitempty"`
}

// RuntimeObjectReference names an object in a runtime.
type RuntimeObjectReference struct {
	// Kind is ServiceAccount, Role, ClusterRole, RoleBinding or ClusterRoleBinding.
	Kind string `json:"kind"`
	// Namespace is empty for cluster-scoped objects.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Name is the object's name in the runtime.
	Name string `json:"name"`
}
