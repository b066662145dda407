// Package olm holds what the OLM install test (`make test-olm`) needs besides OLM itself: a node stand-in that runs
// the pods of the Deployments OLM creates as local processes, and the file-based catalog served to OLM.
package olm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
)

// Node stands in for what the test API servers lack to run a Deployment: the Deployment controller and a kubelet.
// For every Deployment of its namespace it starts spec.replicas processes of the pod template's one container, the
// way a kubelet with host networking would start it, and writes the Deployment's status from the container's
// readiness probe (an HTTP GET against the process). It is a stand-in, not a node: no image is pulled (the image is
// a local directory, its root file system), no Pod object exists, and the container runs as the test's user.
//
// What the container gets is read from the Deployment as OLM wrote it: the command and arguments, the environment
// (values, the downward API fields, ConfigMap and Secret keys), the Secret, ConfigMap and emptyDir volumes, and a
// token of the pod's ServiceAccount from the TokenRequest API. Three things a process on a shared host cannot have
// as a container has them are translated, and nothing else:
//   - a mounted volume lives in a directory of its own; an argument or environment value naming a path under the
//     mount path is rewritten to that directory, and a volume mounted at /tmp becomes TMPDIR;
//   - a container port is a free loopback port; an argument whose value ends in ":<containerPort>" (a bind
//     address) is rewritten to 127.0.0.1:<that port>, and the probes use it;
//   - the ServiceAccount's token and the API server's CA are not at /var/run/secrets/kubernetes.io/serviceaccount
//     but in a kubeconfig named by KUBECONFIG, which controller-runtime reads before the in-cluster files.
//
// test/sandbox/node runs one pod more faithfully (its own root file system, paths and arguments unchanged, the
// image's user) but on the host's network; this stand-in runs a Deployment of two replicas and rolls it out
// surge-first, so up to four copies of the container run at once and each needs ports of its own: hence the
// translated ports and, with them, the translated paths.
//
// A template change (a new generation) is rolled out surge-first: the new processes start, and once they are all
// ready the old ones get SIGTERM, as a rolling update with maxUnavailable 0 does.
type Node struct {
	// Images maps an image reference to the directory that stands for its root file system (the container's
	// command[0] is a path in it).
	Images map[string]string
	// Dir is where the pods' volumes, tokens and logs are written.
	Dir string

	admin     *rest.Config
	clients   kubernetes.Interface
	namespace string

	mu       sync.Mutex
	sets     map[string]*podSet // by Deployment name: the pods of the current pod template
	old      map[string]*podSet // by Deployment name: those of the previous template, until the current ones are ready
	restarts int
	started  int
	seq      int // names the pods' directories
	lastErr  error
	cancel   context.CancelFunc
	done     chan struct{}
}

// maxRestarts bounds the restarts of all containers: a kubelet backs off, the stand-in stops.
const maxRestarts = 5

// podSet is the pods of one pod template of a Deployment.
type podSet struct {
	template string // the template's hash: a new one is a rollout, as for the Deployment controller's ReplicaSets
	pods     []*pod
}

// pod is one running container.
type pod struct {
	name      string
	cmd       *exec.Cmd
	exited    chan struct{}
	readiness string // URL of the readiness probe ("" : ready once started)
	log       *os.File
	spec      *appsv1.Deployment
	index     int
}

// StartNode starts the stand-in for the Deployments of namespace, with admin as the kubelet's and the Deployment
// controller's credentials. Stop it with Stop.
func StartNode(admin *rest.Config, namespace, dir string, images map[string]string) (*Node, error) {
	cs, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return nil, fmt.Errorf("node stand-in: client: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := &Node{Images: images, Dir: dir, admin: admin, clients: cs, namespace: namespace,
		sets: map[string]*podSet{}, old: map[string]*podSet{}, cancel: cancel, done: make(chan struct{})}
	go n.loop(ctx)
	return n, nil
}

// Stop stops every process (SIGTERM, then SIGKILL after the pod's grace period) and the stand-in.
func (n *Node) Stop() {
	n.cancel()
	<-n.done
	n.mu.Lock()
	defer n.mu.Unlock()
	for name, s := range n.sets {
		stopPods(s)
		delete(n.sets, name)
	}
	for name, s := range n.old {
		stopPods(s)
		delete(n.old, name)
	}
}

// Restarts is how many times a container exited while it was meant to run (and was started again, as a kubelet
// with restartPolicy Always does).
func (n *Node) Restarts() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.restarts
}

// Started is how many containers were started, restarts included.
func (n *Node) Started() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.started
}

// LastError is the last error of the stand-in itself (nil: none), e.g. a Secret volume whose Secret is missing.
func (n *Node) LastError() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.lastErr
}

// Logs returns the paths of the current pods' logs of the Deployment name.
func (n *Node) Logs(name string) []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for _, set := range []*podSet{n.old[name], n.sets[name]} {
		if set == nil {
			continue
		}
		for _, p := range set.pods {
			out = append(out, p.log.Name())
		}
	}
	return out
}

func (n *Node) loop(ctx context.Context) {
	defer close(n.done)
	for {
		err := n.sync(ctx)
		n.mu.Lock()
		n.lastErr = err
		n.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// sync is one pass of the Deployment controller and the kubelet over the namespace.
func (n *Node) sync(ctx context.Context) error {
	list, err := n.clients.AppsV1().Deployments(n.namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list deployments: %w", err)
	}
	seen := map[string]bool{}
	var errs []error
	for i := range list.Items {
		d := &list.Items[i]
		seen[d.Name] = true
		if err := n.syncDeployment(ctx, d); err != nil {
			errs = append(errs, fmt.Errorf("deployment %s: %w", d.Name, err))
		}
	}
	n.mu.Lock()
	for name, s := range n.sets {
		if !seen[name] {
			stopPods(s)
			delete(n.sets, name)
		}
	}
	for name, s := range n.old {
		if !seen[name] {
			stopPods(s)
			delete(n.old, name)
		}
	}
	n.mu.Unlock()
	return errors.Join(errs...)
}

func (n *Node) syncDeployment(ctx context.Context, d *appsv1.Deployment) error {
	want := int(ptr.Deref(d.Spec.Replicas, 1))
	n.mu.Lock()
	cur := n.sets[d.Name]
	n.mu.Unlock()
	template, err := templateHash(d.Spec.Template)
	if err != nil {
		return err
	}
	if cur == nil || cur.template != template {
		// A new pod template: its pods start beside the old ones (surge); the old go once the new are ready. A
		// change of the Deployment's labels or replicas alone starts no pod, as in Kubernetes.
		next := &podSet{template: template}
		for i := range want {
			p, err := n.startPod(ctx, d, i)
			if err != nil {
				stopPods(next)
				return err
			}
			next.pods = append(next.pods, p)
		}
		n.mu.Lock()
		if cur != nil {
			if older := n.old[d.Name]; older != nil {
				stopPods(older)
			}
			n.old[d.Name] = cur
		}
		n.sets[d.Name] = next
		n.mu.Unlock()
		cur = next
	}
	ready := 0
	for i, p := range cur.pods {
		if p.hasExited() {
			n.mu.Lock()
			n.restarts++
			giveUp := n.restarts > maxRestarts
			n.mu.Unlock()
			if giveUp {
				continue // a crash loop: the test fails on the restart count, and its logs say why
			}
			_ = p.log.Close()
			restarted, err := n.startPod(ctx, p.spec, p.index)
			if err != nil {
				return fmt.Errorf("restart %s: %w", p.name, err)
			}
			cur.pods[i] = restarted
			continue
		}
		if probe(ctx, p.readiness) {
			ready++
		}
	}
	n.mu.Lock()
	old := n.old[d.Name]
	if ready == want && old != nil {
		delete(n.old, d.Name)
	}
	n.mu.Unlock()
	oldCount := 0
	if ready == want && old != nil {
		stopPods(old)
	} else if old != nil {
		oldCount = len(old.pods)
	}
	return n.writeStatus(ctx, d, want, ready, oldCount)
}

// templateHash identifies a pod template.
func templateHash(t corev1.PodTemplateSpec) (string, error) {
	data, err := json.Marshal(t)
	if err != nil {
		return "", fmt.Errorf("hash the pod template: %w", err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8]), nil
}

// writeStatus writes what the Deployment controller would: the observed generation, the replica counts and the
// Available condition (OLM's install check reads exactly these).
func (n *Node) writeStatus(ctx context.Context, d *appsv1.Deployment, want, ready, old int) error {
	available := corev1.ConditionFalse
	reason := "MinimumReplicasUnavailable"
	if ready == want {
		available, reason = corev1.ConditionTrue, "MinimumReplicasAvailable"
	}
	now := metav1.Now()
	st := appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation,
		Replicas:           int32(want + old),
		UpdatedReplicas:    int32(want),
		ReadyReplicas:      int32(ready + old),
		AvailableReplicas:  int32(ready + old),
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: available, Reason: reason, LastUpdateTime: now, LastTransitionTime: now},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable", LastUpdateTime: now, LastTransitionTime: now},
		},
	}
	st.UnavailableReplicas = st.Replicas - st.AvailableReplicas
	if sameStatus(d.Status, st) {
		return nil
	}
	// Keep the transition times of conditions that did not change, as the controller does.
	for i, c := range st.Conditions {
		for _, prev := range d.Status.Conditions {
			if prev.Type == c.Type && prev.Status == c.Status {
				st.Conditions[i].LastTransitionTime = prev.LastTransitionTime
			}
		}
	}
	d = d.DeepCopy()
	d.Status = st
	_, err := n.clients.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil // the next pass sees the new version
	}
	if err != nil {
		return fmt.Errorf("write status: %w", err)
	}
	return nil
}

func sameStatus(a, b appsv1.DeploymentStatus) bool {
	if a.ObservedGeneration != b.ObservedGeneration || a.Replicas != b.Replicas || a.UpdatedReplicas != b.UpdatedReplicas ||
		a.ReadyReplicas != b.ReadyReplicas || a.AvailableReplicas != b.AvailableReplicas || len(a.Conditions) != len(b.Conditions) {
		return false
	}
	for i := range a.Conditions {
		if a.Conditions[i].Type != b.Conditions[i].Type || a.Conditions[i].Status != b.Conditions[i].Status {
			return false
		}
	}
	return true
}

// startPod starts replica index of the Deployment's pod template.
func (n *Node) startPod(ctx context.Context, d *appsv1.Deployment, index int) (*pod, error) {
	tmpl := d.Spec.Template
	if len(tmpl.Spec.Containers) != 1 || len(tmpl.Spec.InitContainers) != 0 {
		return nil, fmt.Errorf("the stand-in runs pods of exactly one container, %s has %d (and %d init containers)",
			d.Name, len(tmpl.Spec.Containers), len(tmpl.Spec.InitContainers))
	}
	c := tmpl.Spec.Containers[0]
	root, ok := n.Images[c.Image]
	if !ok {
		return nil, fmt.Errorf("image %s is not on this node (known: %v)", c.Image, keys(n.Images))
	}
	if len(c.Command) == 0 {
		return nil, fmt.Errorf("container %s has no command (the image's entrypoint is not known here)", c.Name)
	}
	n.mu.Lock()
	n.seq++
	seq := n.seq
	n.mu.Unlock()
	name := fmt.Sprintf("%s-%d-%d", d.Name, seq, index)
	dir := filepath.Join(n.Dir, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	paths, tmp, err := n.mountVolumes(ctx, d.Namespace, tmpl.Spec, c, dir)
	if err != nil {
		return nil, err
	}
	ports, err := mapPorts(c.Ports)
	if err != nil {
		return nil, err
	}
	kubeconfig, err := n.serviceAccountKubeconfig(ctx, d.Namespace, tmpl.Spec.ServiceAccountName, dir)
	if err != nil {
		return nil, err
	}
	env, err := n.environment(ctx, d.Namespace, name, tmpl, c)
	if err != nil {
		return nil, err
	}
	translate := func(v string) string { return bindAddress(ports, translatePaths(paths, v)) }
	args := make([]string, 0, len(c.Command)+len(c.Args))
	for _, a := range append(append([]string{}, c.Command[1:]...), c.Args...) {
		args = append(args, translate(a))
	}
	for i, e := range env {
		k, v, _ := strings.Cut(e, "=")
		env[i] = k + "=" + translate(v)
	}
	env = append(env, "KUBECONFIG="+kubeconfig)
	if tmp != "" {
		env = append(env, "TMPDIR="+tmp)
	}
	// Appended to: a restarted container's log keeps what the one before it wrote, as `kubectl logs --previous` would.
	log, err := os.OpenFile(filepath.Join(dir, "container.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(filepath.Join(root, filepath.Clean("/"+c.Command[0])), args...)
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = env, dir, log, log
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &pod{name: name, cmd: cmd, exited: make(chan struct{}), log: log, spec: d, index: index,
		readiness: probeURL(c.ReadinessProbe, c.Ports, ports)}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	n.mu.Lock()
	n.started++
	n.mu.Unlock()
	return p, nil
}

// mountVolumes writes the container's volumes into dir and returns mount path -> directory, and the directory of a
// volume mounted at /tmp ("" : none).
func (n *Node) mountVolumes(ctx context.Context, ns string, spec corev1.PodSpec, c corev1.Container, dir string) (map[string]string, string, error) {
	volumes := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = v
	}
	paths := map[string]string{}
	tmp := ""
	for _, m := range c.VolumeMounts {
		if m.SubPath != "" || m.SubPathExpr != "" {
			return nil, "", fmt.Errorf("volume mount %s: subPath is not supported by the stand-in", m.Name)
		}
		v, ok := volumes[m.Name]
		if !ok {
			return nil, "", fmt.Errorf("volume mount %s: no such volume", m.Name)
		}
		target := filepath.Join(dir, "volumes", m.Name)
		if err := os.MkdirAll(target, 0o700); err != nil {
			return nil, "", err
		}
		files := map[string][]byte{}
		mode := os.FileMode(0o644)
		switch {
		case v.Secret != nil:
			s, err := n.clients.CoreV1().Secrets(ns).Get(ctx, v.Secret.SecretName, metav1.GetOptions{})
			if apierrors.IsNotFound(err) && ptr.Deref(v.Secret.Optional, false) {
				break
			}
			if err != nil {
				// A kubelet keeps the pod in ContainerCreating; the next pass tries again.
				return nil, "", fmt.Errorf("secret volume %s: %w", m.Name, err)
			}
			files = s.Data
			if v.Secret.DefaultMode != nil {
				mode = os.FileMode(*v.Secret.DefaultMode)
			}
		case v.ConfigMap != nil:
			cm, err := n.clients.CoreV1().ConfigMaps(ns).Get(ctx, v.ConfigMap.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) && ptr.Deref(v.ConfigMap.Optional, false) {
				break
			}
			if err != nil {
				return nil, "", fmt.Errorf("configmap volume %s: %w", m.Name, err)
			}
			for k, val := range cm.Data {
				files[k] = []byte(val)
			}
			if v.ConfigMap.DefaultMode != nil {
				mode = os.FileMode(*v.ConfigMap.DefaultMode)
			}
		case v.EmptyDir != nil:
			if m.MountPath == "/tmp" {
				tmp = target
			}
		default:
			return nil, "", fmt.Errorf("volume %s: only secret, configMap and emptyDir volumes are supported by the stand-in", m.Name)
		}
		for k, data := range files {
			if err := os.WriteFile(filepath.Join(target, k), data, mode|0o400); err != nil {
				return nil, "", err
			}
		}
		paths[filepath.Clean(m.MountPath)] = target
	}
	return paths, tmp, nil
}

// serviceAccountKubeconfig requests a token of the pod's ServiceAccount (as the kubelet does for the projected
// token) and writes a kubeconfig with it and the API server's CA; it returns the kubeconfig's path.
func (n *Node) serviceAccountKubeconfig(ctx context.Context, ns, sa, dir string) (string, error) {
	if sa == "" {
		sa = "default"
	}
	tr, err := n.clients.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		// Before OLM created the ServiceAccount, a kubelet could not start the pod either.
		return "", fmt.Errorf("token of service account %s/%s: %w", ns, sa, err)
	}
	sadir := filepath.Join(dir, "serviceaccount")
	if err := os.MkdirAll(sadir, 0o700); err != nil {
		return "", err
	}
	tokenFile := filepath.Join(sadir, "token")
	if err := os.WriteFile(tokenFile, []byte(tr.Status.Token), 0o600); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(sadir, "namespace"), []byte(ns), 0o600); err != nil {
		return "", err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["kcp"] = &clientcmdapi.Cluster{Server: n.admin.Host, CertificateAuthorityData: n.admin.CAData}
	cfg.AuthInfos["sa"] = &clientcmdapi.AuthInfo{TokenFile: tokenFile}
	cfg.Contexts["sa"] = &clientcmdapi.Context{Cluster: "kcp", AuthInfo: "sa", Namespace: ns}
	cfg.CurrentContext = "sa"
	path := filepath.Join(sadir, "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", fmt.Errorf("write kubeconfig: %w", err)
	}
	return path, nil
}

// annotationRef matches the downward API's metadata.annotations['key'] and metadata.labels['key'].
var annotationRef = regexp.MustCompile(`^metadata\.(annotations|labels)\['(.+)'\]$`)

// environment resolves the container's env and envFrom as the kubelet does (later entries win).
func (n *Node) environment(ctx context.Context, ns, podName string, tmpl corev1.PodTemplateSpec, c corev1.Container) ([]string, error) {
	var out []string
	for _, from := range c.EnvFrom {
		data := map[string]string{}
		switch {
		case from.ConfigMapRef != nil:
			cm, err := n.clients.CoreV1().ConfigMaps(ns).Get(ctx, from.ConfigMapRef.Name, metav1.GetOptions{})
			if err != nil && (!apierrors.IsNotFound(err) || !ptr.Deref(from.ConfigMapRef.Optional, false)) {
				return nil, fmt.Errorf("envFrom configmap %s: %w", from.ConfigMapRef.Name, err)
			}
			if err == nil {
				data = cm.Data
			}
		case from.SecretRef != nil:
			s, err := n.clients.CoreV1().Secrets(ns).Get(ctx, from.SecretRef.Name, metav1.GetOptions{})
			if err != nil && (!apierrors.IsNotFound(err) || !ptr.Deref(from.SecretRef.Optional, false)) {
				return nil, fmt.Errorf("envFrom secret %s: %w", from.SecretRef.Name, err)
			}
			if err == nil {
				for k, v := range s.Data {
					data[k] = string(v)
				}
			}
		}
		for k, v := range data {
			out = append(out, from.Prefix+k+"="+v)
		}
	}
	for _, e := range c.Env {
		v, err := n.envValue(ctx, ns, podName, tmpl, e)
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", e.Name, err)
		}
		out = append(out, e.Name+"="+v)
	}
	return out, nil
}

func (n *Node) envValue(ctx context.Context, ns, podName string, tmpl corev1.PodTemplateSpec, e corev1.EnvVar) (string, error) {
	from := e.ValueFrom
	switch {
	case from == nil:
		return e.Value, nil
	case from.FieldRef != nil:
		switch path := from.FieldRef.FieldPath; path {
		case "metadata.namespace":
			return ns, nil
		case "metadata.name":
			return podName, nil
		case "spec.serviceAccountName":
			return tmpl.Spec.ServiceAccountName, nil
		case "status.podIP", "status.hostIP":
			return "127.0.0.1", nil
		default:
			m := annotationRef.FindStringSubmatch(path)
			if m == nil {
				return "", fmt.Errorf("field %s is not supported by the stand-in", path)
			}
			if m[1] == "annotations" {
				return tmpl.Annotations[m[2]], nil
			}
			return tmpl.Labels[m[2]], nil
		}
	case from.ConfigMapKeyRef != nil:
		cm, err := n.clients.CoreV1().ConfigMaps(ns).Get(ctx, from.ConfigMapKeyRef.Name, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		return cm.Data[from.ConfigMapKeyRef.Key], nil
	case from.SecretKeyRef != nil:
		s, err := n.clients.CoreV1().Secrets(ns).Get(ctx, from.SecretKeyRef.Name, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		return string(s.Data[from.SecretKeyRef.Key]), nil
	}
	return "", errors.New("resourceFieldRef is not supported by the stand-in")
}

// translatePaths rewrites a value naming a path under a mount path to the volume's directory.
func translatePaths(paths map[string]string, v string) string {
	for mount, dir := range paths {
		for _, sep := range []string{"=", ""} {
			prefix, rest, ok := strings.Cut(v, sep+mount)
			if !ok || (sep == "" && prefix != "") {
				continue
			}
			if rest == "" || strings.HasPrefix(rest, "/") {
				return prefix + sep + dir + rest
			}
		}
	}
	return v
}

// mapPorts gives each container port a free loopback port.
func mapPorts(ports []corev1.ContainerPort) (map[int32]int, error) {
	out := map[int32]int{}
	for _, p := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("port for %d: %w", p.ContainerPort, err)
		}
		out[p.ContainerPort] = l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
	}
	return out, nil
}

// bindAddress rewrites a bind address ending in ":<containerPort>" to the loopback port that stands for it.
func bindAddress(ports map[int32]int, v string) string {
	i := strings.LastIndex(v, ":")
	if i < 0 {
		return v
	}
	port, err := strconv.Atoi(v[i+1:])
	if err != nil {
		return v
	}
	local, ok := ports[int32(port)]
	if !ok {
		return v
	}
	head := v[:i]
	if eq := strings.LastIndex(head, "="); eq >= 0 {
		head = head[:eq+1]
	} else {
		head = ""
	}
	return fmt.Sprintf("%s127.0.0.1:%d", head, local)
}

// probeURL is the URL of an HTTP GET probe ("" : no probe, or not an HTTP GET one).
func probeURL(p *corev1.Probe, declared []corev1.ContainerPort, ports map[int32]int) string {
	if p == nil || p.HTTPGet == nil {
		return ""
	}
	port := p.HTTPGet.Port.IntVal
	if name := p.HTTPGet.Port.StrVal; name != "" {
		for _, d := range declared {
			if d.Name == name {
				port = d.ContainerPort
			}
		}
	}
	return fmt.Sprintf("http://127.0.0.1:%d%s", ports[port], p.HTTPGet.Path)
}

// probe is one HTTP GET probe: ready on a 2xx or 3xx answer, as the kubelet judges it.
func probe(ctx context.Context, url string) bool {
	if url == "" {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode >= 200 && resp.StatusCode < 400
}

func (p *pod) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// stopPods ends the pods as a kubelet does: SIGTERM, SIGKILL after the grace period.
func stopPods(s *podSet) {
	var wg sync.WaitGroup
	for _, p := range s.pods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			grace := time.Duration(ptr.Deref(p.spec.Spec.Template.Spec.TerminationGracePeriodSeconds, 30)) * time.Second
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.exited:
			case <-time.After(grace):
				_ = p.cmd.Process.Kill()
				<-p.exited
			}
			_ = p.log.Close()
		}()
	}
	wg.Wait()
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
