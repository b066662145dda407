// Package node is a stand-in for a kubelet on this machine: it runs one container of a pod spec as a process, the
// way a node would start it, for tests that must see a manifest work as written (a Deployment of the previous
// infrastructure manager, a Deployment OLM made). There is no container runtime here, so the image is a binary
// built on this machine; everything else comes from the spec and the cluster, as a kubelet takes it:
//
//   - the container's command and arguments, unchanged;
//   - its environment: literal values, the downward API's namespace and pod name, and the in-cluster variables
//     (KUBERNETES_SERVICE_HOST/PORT) a kubelet adds;
//   - its volumes, read from the cluster: ConfigMap and Secret items (or every key), emptyDir, and the
//     ServiceAccount token a pod gets unless automount is off (a TokenRequest for the pod's ServiceAccount, the
//     cluster's CA, the namespace), at their mount paths;
//   - a root file system of its own (a private mount namespace and chroot: the process sees only the host's system
//     directories, read-only, and its mounts), read-only when the container asks for readOnlyRootFilesystem;
//   - the user of the security context, or of the image (distroless's nonroot 65532) when runAsNonRoot.
//
// Not emulated: the network (the process shares the host's, as with hostNetwork), resource limits, probes (Ready
// asks the container's readiness probe once; the caller polls it), restarts. It needs root and util-linux's
// unshare; Supported says whether this machine has them.
package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// ImageUser is the user a container runs as when its security context asks for a non-root user and names none:
// the user of the distroless nonroot base image this project's image is built on.
const ImageUser = 65532

// saDir is where a kubelet mounts the pod's ServiceAccount token, CA and namespace.
const saDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// Pod is one container of a pod spec to run.
type Pod struct {
	// Namespace and Name of the pod (the downward API's values).
	Namespace, Name string
	Spec            corev1.PodSpec
	// Container names the container to run; empty: the first.
	Container string
	// Images maps an image reference of the spec to the binary on this machine that stands for it.
	Images map[string]string
}

// Process is a running container.
type Process struct {
	cmd       *exec.Cmd
	container corev1.Container
	root      string
	exited    chan struct{}
	err       error

	mu   sync.Mutex
	logs bytes.Buffer
}

// Supported returns nil when this machine can run a pod: root (mount namespaces, chroot) and unshare.
func Supported() error {
	if os.Geteuid() != 0 {
		return errors.New("the node stand-in needs root (a private mount namespace and chroot)")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		return fmt.Errorf("the node stand-in needs util-linux's unshare: %w", err)
	}
	return nil
}

// Start prepares the pod's file system from the cluster cfg points to and starts its container. The process runs
// until Stop (or ctx is done).
func Start(ctx context.Context, cfg *rest.Config, pod Pod) (*Process, error) {
	if err := Supported(); err != nil {
		return nil, err
	}
	c, err := container(pod)
	if err != nil {
		return nil, err
	}
	if len(c.Command) == 0 {
		return nil, fmt.Errorf("container %s: the stand-in has no image entrypoint, the spec must name the command", c.Name)
	}
	binary, ok := pod.Images[c.Image]
	if !ok {
		return nil, fmt.Errorf("container %s: no binary stands for image %s", c.Name, c.Image)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("client of the pod's cluster: %w", err)
	}
	root, err := os.MkdirTemp("", "node-"+pod.Name+"-")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(root, 0o755); err != nil {
		return nil, err
	}
	p := &Process{container: c, root: root, exited: make(chan struct{})}
	if err := copyFile(binary, filepath.Join(root, c.Command[0]), 0o755); err != nil {
		return nil, fmt.Errorf("the image's binary: %w", err)
	}
	writable, err := writeVolumes(ctx, cs, cfg, pod, c, root)
	if err != nil {
		return nil, err
	}
	env, err := environment(cfg, pod, c)
	if err != nil {
		return nil, err
	}
	uid := userOf(pod, c)
	readOnly := c.SecurityContext != nil && ptr.Deref(c.SecurityContext.ReadOnlyRootFilesystem, false)
	args := append([]string{"--mount", "--propagation", "private", "sh", "-c", mountScript, "node",
		root, strconv.FormatBool(readOnly), strconv.Itoa(uid), strings.Join(writable, ":")}, append(c.Command, c.Args...)...)
	// #nosec G204 -- a test's own pod spec on a test machine.
	p.cmd = exec.CommandContext(ctx, "unshare", args...)
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = (*logWriter)(p), (*logWriter)(p)
	p.cmd.Cancel = func() error { return p.cmd.Process.Signal(syscall.SIGTERM) }
	p.cmd.WaitDelay = 30 * time.Second
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start container %s: %w", c.Name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
		_ = os.RemoveAll(root)
	}()
	return p, nil
}

// mountScript builds the container's root in a private mount namespace and runs the command in it: the host's
// system directories read-only (for the dynamic loader and CA certificates a binary may need), /proc and /dev, the
// root itself read-only when asked, the emptyDirs writable (tmpfs), then chroot as the container's user.
// Arguments: root, read-only, uid, emptyDir paths (colon-separated), the command.
const mountScript = `set -eu
root=$1 ro=$2 uid=$3 writable=$4; shift 4
mount --bind "$root" "$root"
for d in usr bin sbin lib lib32 lib64 libx32 etc; do
  if [ -L "/$d" ]; then ln -s "$(readlink "/$d")" "$root/$d"
  elif [ -d "/$d" ]; then mkdir -p "$root/$d"; mount --bind "/$d" "$root/$d"; mount -o remount,bind,ro "$root/$d"; fi
done
mkdir -p "$root/proc" "$root/dev"
mount --rbind /proc "$root/proc"
mount --rbind /dev "$root/dev"
IFS=:
for w in $writable; do mount -t tmpfs -o mode=1777 tmpfs "$root$w"; done
unset IFS
if [ "$ro" = true ]; then mount -o remount,bind,ro "$root"; fi
exec chroot --userspec="$uid:$uid" "$root" "$@"
`

// Logs returns what the container wrote to stdout and stderr so far.
func (p *Process) Logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.logs.String()
}

type logWriter Process

func (w *logWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.logs.Write(b)
}

// Exited is closed when the container has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Err is the exit of the container (after Exited).
func (p *Process) Err() error { return p.err }

// Stop sends SIGTERM, as a kubelet does, and waits at most grace for the exit; then it kills the container. It
// returns the exit error, or an error saying the grace period was exceeded.
func (p *Process) Stop(grace time.Duration) error {
	select {
	case <-p.exited:
		return p.err
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return p.err
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.exited
		return fmt.Errorf("container %s did not stop within its grace period of %s", p.container.Name, grace)
	}
}

// Ready asks the container's readiness probe (httpGet) once, on the host network: nil when it answers 2xx.
func (p *Process) Ready(ctx context.Context) error {
	probe := p.container.ReadinessProbe
	if probe == nil || probe.HTTPGet == nil {
		return errors.New("the container has no httpGet readiness probe")
	}
	port := probe.HTTPGet.Port.IntValue()
	if port == 0 {
		for _, cp := range p.container.Ports {
			if cp.Name == probe.HTTPGet.Port.String() {
				port = int(cp.ContainerPort)
			}
		}
	}
	if port == 0 {
		return fmt.Errorf("readiness probe port %s is not a port of the container", probe.HTTPGet.Port.String())
	}
	scheme := strings.ToLower(string(probe.HTTPGet.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	u := url.URL{Scheme: scheme, Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Path: probe.HTTPGet.Path}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return fmt.Errorf("readiness probe %s: %s", u.String(), resp.Status)
	}
	return nil
}

func container(pod Pod) (corev1.Container, error) {
	for _, c := range pod.Spec.Containers {
		if pod.Container == "" || c.Name == pod.Container {
			return c, nil
		}
	}
	return corev1.Container{}, fmt.Errorf("pod %s has no container %q", pod.Name, pod.Container)
}

// userOf is the uid the container runs as: its own or the pod's runAsUser, else ImageUser when a non-root user is
// required, else root.
func userOf(pod Pod, c corev1.Container) int {
	var uid *int64
	nonRoot := false
	if sc := pod.Spec.SecurityContext; sc != nil {
		uid, nonRoot = sc.RunAsUser, ptr.Deref(sc.RunAsNonRoot, false)
	}
	if sc := c.SecurityContext; sc != nil {
		if sc.RunAsUser != nil {
			uid = sc.RunAsUser
		}
		if sc.RunAsNonRoot != nil {
			nonRoot = *sc.RunAsNonRoot
		}
	}
	switch {
	case uid != nil:
		return int(*uid)
	case nonRoot:
		return ImageUser
	default:
		return 0
	}
}

// environment is what a kubelet gives the container: PATH (the image's), the in-cluster service variables, and the
// container's env in order.
func environment(cfg *rest.Config, pod Pod, c corev1.Container) ([]string, error) {
	host, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, fmt.Errorf("the cluster's address %q: %w", cfg.Host, err)
	}
	env := []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"KUBERNETES_SERVICE_HOST=" + host.Hostname(), "KUBERNETES_SERVICE_PORT=" + host.Port()}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env = append(env, e.Name+"="+e.Value)
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
			env = append(env, e.Name+"="+pod.Namespace)
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name":
			env = append(env, e.Name+"="+pod.Name)
		default:
			return nil, fmt.Errorf("container %s: env %s: only literal values and the pod's namespace and name are supported", c.Name, e.Name)
		}
	}
	if len(c.EnvFrom) > 0 {
		return nil, fmt.Errorf("container %s: envFrom is not supported by the stand-in", c.Name)
	}
	return env, nil
}

// writeVolumes writes the files of the container's volume mounts under root and returns the emptyDir mount paths.
func writeVolumes(ctx context.Context, cs kubernetes.Interface, cfg *rest.Config, pod Pod, c corev1.Container, root string) ([]string, error) {
	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Spec.Volumes {
		volumes[v.Name] = v
	}
	var writable []string
	for _, m := range c.VolumeMounts {
		v, ok := volumes[m.Name]
		if !ok {
			return nil, fmt.Errorf("container %s mounts volume %s, which the pod does not have", c.Name, m.Name)
		}
		dir := filepath.Join(root, m.MountPath)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		var files map[string][]byte
		var items []corev1.KeyToPath
		switch {
		case v.ConfigMap != nil:
			cm, err := cs.CoreV1().ConfigMaps(pod.Namespace).Get(ctx, v.ConfigMap.Name, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("volume %s: %w", v.Name, err)
			}
			files, items = map[string][]byte{}, v.ConfigMap.Items
			for k, s := range cm.Data {
				files[k] = []byte(s)
			}
			for k, b := range cm.BinaryData {
				files[k] = b
			}
		case v.Secret != nil:
			s, err := cs.CoreV1().Secrets(pod.Namespace).Get(ctx, v.Secret.SecretName, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("volume %s: %w", v.Name, err)
			}
			files, items = s.Data, v.Secret.Items
		case v.EmptyDir != nil:
			writable = append(writable, m.MountPath)
			continue
		default:
			return nil, fmt.Errorf("volume %s: only ConfigMap, Secret and emptyDir volumes are supported by the stand-in", v.Name)
		}
		if err := writeItems(dir, files, items); err != nil {
			return nil, fmt.Errorf("volume %s: %w", v.Name, err)
		}
	}
	if pod.Spec.AutomountServiceAccountToken == nil || *pod.Spec.AutomountServiceAccountToken {
		if err := writeServiceAccount(ctx, cs, cfg, pod, filepath.Join(root, saDir)); err != nil {
			return nil, err
		}
	}
	return writable, nil
}

func writeItems(dir string, files map[string][]byte, items []corev1.KeyToPath) error {
	if len(items) == 0 {
		for k := range files {
			items = append(items, corev1.KeyToPath{Key: k, Path: k})
		}
	}
	for _, it := range items {
		data, ok := files[it.Key]
		if !ok {
			return fmt.Errorf("no key %s", it.Key)
		}
		path := filepath.Join(dir, it.Path)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		// 0644: a kubelet's default mode, readable by the container's non-root user.
		if err := os.WriteFile(path, data, 0o644); err != nil { // #nosec G306 -- see above
			return err
		}
	}
	return nil
}

// writeServiceAccount writes a token of the pod's ServiceAccount (default: "default"), the cluster's CA and the
// namespace, as the projected volume a kubelet mounts.
func writeServiceAccount(ctx context.Context, cs kubernetes.Interface, cfg *rest.Config, pod Pod, dir string) error {
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	tr, err := cs.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("token of ServiceAccount %s/%s: %w", pod.Namespace, sa, err)
	}
	return writeItems(dir, map[string][]byte{"token": []byte(tr.Status.Token), "ca.crt": cfg.CAData,
		"namespace": []byte(pod.Namespace)}, nil)
}

func copyFile(from, to string, mode os.FileMode) error {
	data, err := os.ReadFile(from) // #nosec G304 -- a binary the test built
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	return os.WriteFile(to, data, mode)
}
