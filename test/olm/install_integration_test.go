package olm_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	imv1 "github.com/kyma-project/kim/operator/api/v1"
	"github.com/kyma-project/kim/test/olm"
	"github.com/kyma-project/kim/test/sandbox/faultproxy"
	"github.com/kyma-project/kim/test/sandbox/gardenbox"
	"github.com/kyma-project/kim/test/sandbox/runtimeapi"
	"github.com/kyma-project/kim/test/testenv"
	"github.com/kyma-project/kim/test/testenv/keb"
	"github.com/kyma-project/kim/test/testenv/tools"
)

// The garden-in-a-box runs once per test binary; testenv.Main stops it.
func TestMain(m *testing.M) { testenv.Main(m) }

// What docs/install/olm.md tells a landscape to create, by the same names.
const (
	installNamespace = keb.Namespace // OwnNamespace: the OperatorGroup targets the namespace the operator runs in
	catalogNamespace = "olm"
	catalogName      = "kim-catalog"
	packageName      = "kim"
	channel          = "fast"
	deploymentName   = "kim-controller-manager"
	gardenerSecret   = "kim-gardener-kubeconfig"
	// The manager image the CSV names runs from this directory on the node stand-in (the Dockerfile puts the binary
	// at /manager).
	managerInImage = "manager"
)

var (
	csvGVR          = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v1alpha1", Resource: "clusterserviceversions"}
	installPlanGVR  = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v1alpha1", Resource: "installplans"}
	catalogGVK      = schema.GroupVersionKind{Group: "operators.coreos.com", Version: "v1alpha1", Kind: "CatalogSource"}
	subscriptionGVK = schema.GroupVersionKind{Group: "operators.coreos.com", Version: "v1alpha1", Kind: "Subscription"}
	groupGVK        = schema.GroupVersionKind{Group: "operators.coreos.com", Version: "v1", Kind: "OperatorGroup"}
	subscriptionGVR = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v1alpha1", Resource: "subscriptions"}
)

// TestInstalledByOLMIntegration installs the bundle of bundle/ through OLM v0's own olm and catalog operators into
// the garden-in-a-box's KCP, as docs/install/olm.md describes it: a file-based catalog served by `opm serve`, a
// CatalogSource by address, an OperatorGroup for the OwnNamespace install mode and a Subscription with manual
// approval. The manager then runs as OLM installed it (the node stand-in runs the Deployment's container with its
// ServiceAccount's token) and must bring a KEB-shaped Runtime and its GardenerCluster to Ready. A second bundle
// version replaces the first without a write to Gardener and with the Runtime Ready throughout; uninstalling leaves
// the CRDs and the Runtime.
func TestInstalledByOLMIntegration(t *testing.T) {
	testenv.RequireAssets(t)
	assets := tools.RequireEnv(t, "OLM_ASSETS", "run `export OLM_ASSETS=$(hack/olm.sh)` or `make test-olm`")
	// hack/olm.sh builds opm with OLM's operators (one module graph); OPM names another.
	opm := os.Getenv("OPM")
	if opm == "" {
		opm = filepath.Join(assets, "opm")
	}
	tools.RequireFile(t, opm, "run hack/olm.sh, or set OPM")
	monitoringCRDs, globErr := filepath.Glob(filepath.Join(assets, "monitoring-*"))
	if globErr != nil || len(monitoringCRDs) != 1 {
		t.Fatalf("want one directory of monitoring CRDs in %s, found %v (%v): run hack/olm.sh", assets, monitoringCRDs, globErr)
	}
	ctx := t.Context()
	// Kept when the test fails: the logs of OLM, opm and the manager are there.
	work, err := os.MkdirTemp("", "kim-olm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("logs of OLM, opm and the manager kept in %s", work)
			return
		}
		_ = os.RemoveAll(work)
	})

	// The KCP starts with OLM's CRDs only, as a landscape's KCP has them: the operator's CRDs come from the bundle.
	env := testenv.Garden(t, testenv.GardenOptions{RuntimeAPIServers: runtimeapi.ModeShared, CRDDirectory: filepath.Join(assets, "crds")})
	kcp := env.KCPClient
	for _, ns := range []string{catalogNamespace, installNamespace} {
		if err := kcp.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	// Prerequisite of docs/install/olm.md: the Prometheus Operator's CRDs, without which OLM cannot install the
	// bundle's ServiceMonitor and PrometheusRule.
	if _, err := envtest.InstallCRDs(env.KCP, envtest.CRDInstallOptions{Paths: monitoringCRDs, ErrorIfPathMissing: true}); err != nil {
		t.Fatalf("install the monitoring CRDs: %v", err)
	}
	if err := env.WriteKubeconfigs(work); err != nil {
		t.Fatal(err)
	}
	startOLM(t, assets, filepath.Join(work, gardenbox.KCPKubeconfigFile), work)

	// Step 1 of docs/install/olm.md: the Gardener credentials, a token of the project's service account. The
	// manager's Gardener requests go through an auditing proxy that forwards them with that token unchanged.
	proxy := gardenerCredentials(t, env, work)

	v1 := bundleVersion(t, filepath.Join(testenv.RepoRoot(), "bundle"))
	v2dir := nextBundle(t, filepath.Join(testenv.RepoRoot(), "bundle"), filepath.Join(work, "bundle-next"))
	v2 := bundleVersion(t, v2dir)
	// The images: the manager binary built as the Dockerfile builds it, stamped with the bundle's version, at the
	// path the image's entrypoint names. Each bundle names its own image.
	images := map[string]string{}
	for _, b := range []bundle{v1, v2} {
		images[b.image] = filepath.Join(work, "image-"+b.version)
		buildManager(t, filepath.Join(images[b.image], managerInImage), b.version)
	}
	node, err := olm.StartNode(env.KCP, installNamespace, filepath.Join(work, "node"), images)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(node.Stop)
	t.Cleanup(func() {
		if t.Failed() {
			reportNode(t, node)
		}
	})

	// Step 3 and 4: the catalog (one version per catalog, as the release publishes it) and the three objects.
	registry := serveCatalog(t, opm, filepath.Join(work, "catalog-"+v1.version), v1)
	applyAll(t, kcp,
		object(catalogGVK, catalogNamespace, catalogName, map[string]any{"sourceType": "grpc", "address": registry.Address,
			"displayName": "Kyma Infrastructure Manager", "publisher": "Kyma project"}),
		object(groupGVK, installNamespace, packageName, map[string]any{"targetNamespaces": []any{installNamespace}}),
		object(subscriptionGVK, installNamespace, packageName, map[string]any{"channel": channel, "name": packageName,
			"source": catalogName, "sourceNamespace": catalogNamespace, "installPlanApproval": "Manual"}))

	approveInstallPlan(t, env.KCP, v1.csv)
	// The InstallPlan creates the bundle's objects; the CSV's Deployment comes after, from the olm operator.
	waitCSVSucceeded(t, env.KCP, v1.csv)
	checkBundleObjectsInstalled(t, env.KCP, filepath.Join(testenv.RepoRoot(), "bundle", "manifests"), v1.csv)
	if got := node.Started(); got != v1.replicas {
		t.Errorf("%d containers started for %d replicas of the Deployment", got, v1.replicas)
	}

	rt := keb.WithIdentity(keb.GoldenRuntime(t, "aws"), keb.RuntimeID(4001), keb.ShootName(4001))
	if err := kcp.Create(ctx, rt); err != nil {
		t.Fatalf("create runtime: %v", err)
	}
	key := client.ObjectKeyFromObject(rt)
	waitReady(t, kcp, key, 10*time.Minute)
	// The audit sees the manager's Gardener writes (the shoot it created): "no write during the upgrade" below is
	// measured, not vacuous.
	if len(gardenWrites(proxy)) == 0 {
		t.Fatal("no Gardener write seen through the proxy while the runtime was provisioned")
	}

	t.Run("Upgrade", func(t *testing.T) {
		writesBefore := len(gardenWrites(proxy))
		next := serveCatalog(t, opm, filepath.Join(work, "catalog-"+v2.version), v2)
		// The landscape's catalog image moves to the next release: the CatalogSource now reads the new catalog.
		var notReady atomic.Int32
		stopWatching := watchReady(kcp, key, &notReady)
		applyAll(t, kcp, object(catalogGVK, catalogNamespace, catalogName, map[string]any{"sourceType": "grpc",
			"address": next.Address, "displayName": "Kyma Infrastructure Manager", "publisher": "Kyma project"}))
		approveInstallPlan(t, env.KCP, v2.csv)
		waitCSVSucceeded(t, env.KCP, v2.csv)
		testenv.Eventually(t, 3*time.Minute, "the replaced CSV "+v1.csv+" is removed", func() (bool, string) {
			_, err := dynamicFor(t, env.KCP).Resource(csvGVR).Namespace(installNamespace).Get(ctx, v1.csv, metav1.GetOptions{})
			return apierrors.IsNotFound(err), fmt.Sprint(err)
		})
		waitOldPodsGone(t, env.KCP, v1.replicas)
		stopWatching()
		if n := notReady.Load(); n != 0 {
			t.Errorf("the runtime was seen %d times not Ready during the upgrade", n)
		}
		if writes := gardenWrites(proxy)[writesBefore:]; len(writes) != 0 {
			t.Errorf("%d writes to Gardener during the upgrade, want none: %v", len(writes), writes)
		}
		for _, l := range node.Logs(deploymentName) {
			if data, err := os.ReadFile(l); err != nil || !strings.Contains(string(data), `"version":"`+v2.version+`"`) {
				t.Errorf("%s: the manager after the upgrade does not start as version %s (%v)", l, v2.version, err)
			}
		}
		if got, want := node.Started(), v1.replicas+v2.replicas; got != want {
			t.Errorf("%d containers started over both versions, want %d (replicas of each)", got, want)
		}
	})

	t.Run("Uninstall", func(t *testing.T) {
		// OLM's uninstall: the Subscription, then the CSV. The CRDs stay, and with them every Runtime.
		dyn := dynamicFor(t, env.KCP)
		subs := dyn.Resource(subscriptionGVR)
		if err := subs.Namespace(installNamespace).Delete(ctx, packageName, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := dyn.Resource(csvGVR).Namespace(installNamespace).Delete(ctx, v2.csv, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, time.Minute, "the CSV is gone", func() (bool, string) {
			_, err := dyn.Resource(csvGVR).Namespace(installNamespace).Get(ctx, v2.csv, metav1.GetOptions{})
			return apierrors.IsNotFound(err), fmt.Sprint(err)
		})
		crds := dyn.Resource(apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions"))
		for _, crd := range []string{"runtimes.infrastructuremanager.kyma-project.io", "gardenerclusters.infrastructuremanager.kyma-project.io"} {
			c, err := crds.Get(ctx, crd, metav1.GetOptions{})
			if err != nil {
				t.Errorf("CRD %s after uninstall: %v", crd, err)
			} else if c.GetDeletionTimestamp() != nil {
				t.Errorf("CRD %s is being deleted after uninstall", crd)
			}
		}
		got := &imv1.Runtime{}
		if err := kcp.Get(ctx, key, got); err != nil || got.DeletionTimestamp != nil || got.Status.State != imv1.RuntimeStateReady {
			t.Errorf("runtime after uninstall: %v, deleting %v, state %q; want it in place and Ready", err, got.DeletionTimestamp, got.Status.State)
		}
	})
}

// bundle is what the test needs to know of one bundle version.
type bundle struct {
	dir, csv, version, image string
	replicas                 int
}

// bundleVersion reads the CSV of a bundle directory.
func bundleVersion(t *testing.T, dir string) bundle {
	t.Helper()
	csv := readCSV(t, dir)
	spec := csv["spec"].(map[string]any)
	deployments, _, _ := unstructured.NestedSlice(spec, "install", "spec", "deployments")
	if len(deployments) != 1 {
		t.Fatalf("%s: want one Deployment in the CSV, found %d", dir, len(deployments))
	}
	// Decoded from YAML through JSON: the number is a float64.
	replicas, _, _ := unstructured.NestedFieldNoCopy(deployments[0].(map[string]any), "spec", "replicas")
	n, ok := replicas.(float64)
	if !ok || n < 1 {
		t.Fatalf("%s: the Deployment's replicas %v", dir, replicas)
	}
	containers, _, _ := unstructured.NestedSlice(deployments[0].(map[string]any), "spec", "template", "spec", "containers")
	if len(containers) != 1 {
		t.Fatalf("%s: want one container, found %d", dir, len(containers))
	}
	name, _, _ := unstructured.NestedString(csv, "metadata", "name")
	return bundle{dir: dir, csv: name, version: spec["version"].(string), image: containers[0].(map[string]any)["image"].(string),
		replicas: int(n)}
}

func csvPath(t *testing.T, dir string) string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "manifests", "*.clusterserviceversion.yaml"))
	if err != nil || len(paths) != 1 {
		t.Fatalf("want one CSV in %s/manifests, found %v (%v)", dir, paths, err)
	}
	return paths[0]
}

func readCSV(t *testing.T, dir string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(csvPath(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	csv := map[string]any{}
	if err := yaml.Unmarshal(data, &csv); err != nil {
		t.Fatal(err)
	}
	return csv
}

// nextBundle writes a copy of the bundle at from as the next patch version into to: what `make bundle
// VERSION=<next>` would change in it (the CSV's name and version, the manager image's tag), nothing else.
func nextBundle(t *testing.T, from, to string) string {
	t.Helper()
	if out, err := exec.Command("cp", "-r", from, to).CombinedOutput(); err != nil {
		t.Fatalf("copy bundle: %v: %s", err, out)
	}
	cur := bundleVersion(t, from)
	var major, minor, patch int
	if _, err := fmt.Sscanf(cur.version, "%d.%d.%d", &major, &minor, &patch); err != nil {
		t.Fatalf("CSV version %q: %v", cur.version, err)
	}
	next := fmt.Sprintf("%d.%d.%d", major, minor, patch+1)
	repo, _, ok := strings.Cut(cur.image, ":"+cur.version)
	if !ok {
		t.Fatalf("the manager image %s is not tagged with the version %s", cur.image, cur.version)
	}
	image := repo + ":" + next
	csv := readCSV(t, to)
	_ = unstructured.SetNestedField(csv, "kim.v"+next, "metadata", "name")
	_ = unstructured.SetNestedField(csv, image, "metadata", "annotations", "containerImage")
	_ = unstructured.SetNestedField(csv, next, "spec", "version")
	deployments, _, _ := unstructured.NestedSlice(csv, "spec", "install", "spec", "deployments")
	d := deployments[0].(map[string]any)
	containers, _, _ := unstructured.NestedSlice(d, "spec", "template", "spec", "containers")
	containers[0].(map[string]any)["image"] = image
	_ = unstructured.SetNestedSlice(d, containers, "spec", "template", "spec", "containers")
	_ = unstructured.SetNestedSlice(csv, deployments, "spec", "install", "spec", "deployments")
	if related, ok, _ := unstructured.NestedSlice(csv, "spec", "relatedImages"); ok {
		for _, r := range related {
			if m := r.(map[string]any); m["image"] == cur.image {
				m["image"] = image
			}
		}
		_ = unstructured.SetNestedSlice(csv, related, "spec", "relatedImages")
	}
	data, err := yaml.Marshal(csv)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(csvPath(t, to), data, 0o600); err != nil {
		t.Fatal(err)
	}
	return to
}

// serveCatalog writes the catalog of one bundle as hack/catalog.sh does (the bundle in channel fast with
// skipRange <VERSION, so it upgrades any older version) and serves it; the server stops when the test ends.
func serveCatalog(t *testing.T, opm, dir string, b bundle) *olm.Registry {
	t.Helper()
	if err := olm.WriteCatalog(t.Context(), opm, dir, packageName, channel, []olm.Entry{{BundleDir: b.dir, Name: b.csv, SkipRange: "<" + b.version}}); err != nil {
		t.Fatal(err)
	}
	r, err := olm.Serve(opm, dir, dir+".log")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	return r
}

// startOLM runs OLM v0's olm and catalog operators against the KCP with its admin kubeconfig, as OLM's own
// manifests deploy them with cluster-admin rights; they stop when the test ends.
func startOLM(t *testing.T, assets, kubeconfig, dir string) {
	t.Helper()
	for _, c := range []struct {
		name string
		args []string
	}{
		// No ClusterOperator status (an OpenShift API) from either.
		{"olm", []string{"--namespace=" + catalogNamespace, "--writeStatusName=", "--writePackageServerStatusName="}},
		{"catalog", []string{"--namespace=" + catalogNamespace, "--writeStatusName=", "--kubeconfig=" + kubeconfig}},
	} {
		log, err := os.Create(filepath.Join(dir, c.name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(filepath.Join(assets, c.name), c.args...)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Start(); err != nil {
			t.Fatalf("start %s: %v", c.name, err)
		}
		exited := make(chan struct{})
		go func() {
			_ = cmd.Wait() // killed at the end of the test: its exit status says nothing
			close(exited)
		}()
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			<-exited
			_ = log.Close()
			if t.Failed() {
				tail(t, log.Name(), 30)
			}
		})
	}
}

// gardenerCredentials grants config/gardener in the garden's project namespace, requests a token of its
// ServiceAccount and stores a kubeconfig with it as the Secret kim-gardener-kubeconfig (key kubeconfig). The
// kubeconfig's server is an auditing proxy in front of the garden that forwards with the same token.
func gardenerCredentials(t *testing.T, env *gardenbox.Env, dir string) *faultproxy.Proxy {
	t.Helper()
	ctx := t.Context()
	project := "garden-" + env.Catalogue.Project
	as, err := testenv.GrantGarden(ctx, testenv.RepoRoot(), env.Garden, project)
	if err != nil {
		t.Fatal(err)
	}
	ns, sa, err := serviceaccount.SplitUsername(as.Impersonate.UserName)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(env.Garden)
	if err != nil {
		t.Fatal(err)
	}
	expiry := int64(24 * 3600)
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token of the garden service account %s/%s: %v", ns, sa, err)
	}
	upstream := &rest.Config{Host: env.Garden.Host, BearerToken: tr.Status.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: env.Garden.CAData}}
	proxy, err := faultproxy.New(upstream, faultproxy.Options{Audit: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	pc := proxy.ClientConfig()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["garden"] = &clientcmdapi.Cluster{Server: pc.Host, CertificateAuthorityData: pc.CAData}
	cfg.AuthInfos[sa] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["garden"] = &clientcmdapi.Context{Cluster: "garden", AuthInfo: sa, Namespace: ns}
	cfg.CurrentContext = "garden"
	kubeconfig, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: gardenerSecret, Namespace: installNamespace},
		Data: map[string][]byte{"kubeconfig": kubeconfig}}
	if err := env.KCPClient.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	return proxy
}

// gardenWrites are the writes the manager sent to Gardener: every POST, PUT, PATCH and DELETE except access and
// token reviews, which ask and change nothing.
func gardenWrites(p *faultproxy.Proxy) []string {
	var out []string
	for _, w := range p.Writes() {
		if strings.HasSuffix(w.Path, "reviews") {
			continue
		}
		out = append(out, w.Method+" "+w.Path)
	}
	return out
}

// buildManager builds the manager into path with the version in operator/version, as the Dockerfile stamps it.
// Under make test-olm GOFIPS140 is set, as in the Dockerfile, and inherited, and so is make test's -trimpath
// (GOFLAGS). Unlike the Dockerfile it keeps cgo (no CGO_ENABLED=0) and adds no build flag of its own: each of those
// changes the cache key of nearly every package, and the build then shares nothing with the tests' builds (a cold
// CI paid about 3 minutes for it). Neither changes what the manager does.
func buildManager(t *testing.T, path, version string) {
	t.Helper()
	cmd := exec.Command("go", "build", "-buildvcs=false",
		"-ldflags=-s -w -X github.com/kyma-project/kim/operator/version.Version="+version, "-o", path, "./operator/cmd/manager")
	cmd.Dir = testenv.RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the manager: %v\n%s", err, out)
	}
}

// object is an OLM object for a server-side apply.
func object(gvk schema.GroupVersionKind, ns, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func applyAll(t *testing.T, c client.Client, objs ...*unstructured.Unstructured) {
	t.Helper()
	for _, u := range objs {
		if err := c.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("kim-test-olm"), client.ForceOwnership); err != nil {
			t.Fatalf("apply %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
}

func dynamicFor(t *testing.T, cfg *rest.Config) *dynamicClient {
	t.Helper()
	d, err := newDynamic(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// approveInstallPlan waits for the InstallPlan that installs csv, checks that it waits for approval (manual
// approval, as docs/install/olm.md recommends), approves it and waits until OLM has completed it.
func approveInstallPlan(t *testing.T, cfg *rest.Config, csv string) {
	t.Helper()
	ctx := t.Context()
	dyn := dynamicFor(t, cfg)
	plans := dyn.Resource(installPlanGVR).Namespace(installNamespace)
	subs := dyn.Resource(subscriptionGVR).Namespace(installNamespace)
	var plan *unstructured.Unstructured
	// The Subscription names the InstallPlan OLM waits on (OLM may leave others behind while it resolves).
	testenv.Eventually(t, 3*time.Minute, "the Subscription's InstallPlan for "+csv, func() (bool, string) {
		sub, err := subs.Get(ctx, packageName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		name, _, _ := unstructured.NestedString(sub.Object, "status", "installPlanRef", "name")
		if name == "" {
			state, _, _ := unstructured.NestedString(sub.Object, "status", "state")
			return false, "no installPlanRef, state " + state
		}
		p, err := plans.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		names, _, _ := unstructured.NestedStringSlice(p.Object, "spec", "clusterServiceVersionNames")
		if !slices.Contains(names, csv) {
			return false, fmt.Sprintf("InstallPlan %s installs %v", name, names)
		}
		plan = p
		return true, ""
	})
	if approved, _, _ := unstructured.NestedBool(plan.Object, "spec", "approved"); approved {
		t.Errorf("InstallPlan %s was approved before anyone approved it (installPlanApproval: Manual)", plan.GetName())
	}
	patch := []byte(`{"spec":{"approved":true}}`)
	if _, err := plans.Patch(ctx, plan.GetName(), "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("approve %s: %v", plan.GetName(), err)
	}
	phase := ""
	var status any
	testenv.Eventually(t, 3*time.Minute, "InstallPlan "+plan.GetName()+" Complete", func() (bool, string) {
		p, err := plans.Get(ctx, plan.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		phase, _, _ = unstructured.NestedString(p.Object, "status", "phase")
		status = p.Object["status"]
		return phase == "Complete" || phase == "Failed", phase // a failed plan stays failed: no point waiting
	})
	if phase != "Complete" {
		t.Fatalf("InstallPlan %s %s: %v", plan.GetName(), phase, status)
	}
}

func waitCSVSucceeded(t *testing.T, cfg *rest.Config, csv string) {
	t.Helper()
	csvs := dynamicFor(t, cfg).Resource(csvGVR).Namespace(installNamespace)
	testenv.Eventually(t, 5*time.Minute, "CSV "+csv+" Succeeded", func() (bool, string) {
		c, err := csvs.Get(t.Context(), csv, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		phase, _, _ := unstructured.NestedString(c.Object, "status", "phase")
		reason, _, _ := unstructured.NestedString(c.Object, "status", "reason")
		msg, _, _ := unstructured.NestedString(c.Object, "status", "message")
		return phase == "Succeeded", phase + " " + reason + ": " + msg
	})
}

// checkBundleObjectsInstalled checks that OLM created every object of the bundle's manifests (the CRDs cluster-wide,
// the rest in the install namespace, ClusterRoles and their bindings cluster-wide), and the ServiceAccount, Roles,
// bindings and Deployment of the CSV's install strategy.
func checkBundleObjectsInstalled(t *testing.T, cfg *rest.Config, manifests, csv string) {
	t.Helper()
	ctx := t.Context()
	dyn := dynamicFor(t, cfg)
	files, err := filepath.Glob(filepath.Join(manifests, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("bundle manifests: %v %v", files, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &u.Object); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		ns := installNamespace
		name := u.GetName()
		if u.GetKind() == "ClusterServiceVersion" {
			name = csv
		}
		if err := dyn.get(ctx, u.GroupVersionKind(), ns, name); err != nil {
			t.Errorf("%s %s of %s: %v", u.GetKind(), name, filepath.Base(f), err)
		}
	}
	owned := metav1.ListOptions{LabelSelector: "olm.owner=" + csv}
	for _, r := range []struct {
		gvk        schema.GroupVersionKind
		namespaced bool
	}{
		{schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"}, true},
		{schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"}, true},
		{schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}, false},
		{schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"}, false},
		{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, true},
	} {
		n, err := dyn.count(ctx, r.gvk, map[bool]string{true: installNamespace}[r.namespaced], owned)
		if err != nil || n == 0 {
			t.Errorf("%ss owned by %s: %d (%v), want at least one", r.gvk.Kind, csv, n, err)
		}
	}
	if err := dyn.get(ctx, schema.GroupVersionKind{Version: "v1", Kind: "ServiceAccount"}, installNamespace, deploymentName); err != nil {
		t.Errorf("the CSV's ServiceAccount: %v", err)
	}
}

// waitReady waits until the Runtime and the GardenerCluster the operator made for it are Ready.
func waitReady(t *testing.T, c client.Client, key client.ObjectKey, timeout time.Duration) {
	t.Helper()
	testenv.Eventually(t, timeout, "runtime "+key.Name+" and its GardenerCluster Ready", func() (bool, string) {
		rt, gc := &imv1.Runtime{}, &imv1.GardenerCluster{}
		if err := c.Get(context.Background(), key, rt); err != nil {
			return false, err.Error()
		}
		if err := c.Get(context.Background(), key, gc); err != nil {
			return false, "runtime " + string(rt.Status.State) + ", GardenerCluster: " + err.Error()
		}
		var conds []string
		for _, c := range rt.Status.Conditions {
			conds = append(conds, c.Type+"="+string(c.Status)+" "+c.Reason)
		}
		return rt.Status.State == imv1.RuntimeStateReady && gc.Status.State == imv1.GardenerClusterStateReady,
			fmt.Sprintf("runtime %s (%s), GardenerCluster %s", rt.Status.State, strings.Join(conds, "; "), gc.Status.State)
	})
}

// watchReady counts how often the Runtime is seen not Ready until the returned function is called.
func watchReady(c client.Client, key client.ObjectKey, notReady *atomic.Int32) (stop func()) {
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			rt := &imv1.Runtime{}
			if err := c.Get(context.Background(), key, rt); err != nil || rt.Status.State != imv1.RuntimeStateReady {
				notReady.Add(1)
			}
			select {
			case <-done:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	return func() { close(done); <-stopped }
}

// waitOldPodsGone waits until the Deployment runs the new version's replicas only.
func waitOldPodsGone(t *testing.T, cfg *rest.Config, replicas int) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 2*time.Minute, "only the new version's containers run", func() (bool, string) {
		d, err := cs.AppsV1().Deployments(installNamespace).Get(t.Context(), deploymentName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		s := d.Status
		return int(s.Replicas) == replicas && s.UpdatedReplicas == s.Replicas && s.ObservedGeneration == d.Generation,
			fmt.Sprintf("%+v", s)
	})
}

func reportNode(t *testing.T, node *olm.Node) {
	t.Helper()
	t.Logf("node stand-in: %d containers started, %d restarts, last error %v", node.Started(), node.Restarts(), node.LastError())
	for _, l := range node.Logs(deploymentName) {
		tail(t, l, 30)
	}
}

func tail(t *testing.T, path string, n int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Logf("%s: %v", path, err)
		return
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	t.Logf("last %d lines of %s:\n%s", min(n, len(lines)), path, strings.Join(lines[max(0, len(lines)-n):], "\n"))
}
