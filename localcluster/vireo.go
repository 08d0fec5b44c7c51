package localcluster

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/imagebuild"
	"github.com/vireo-dev/vireo/internal/podnetwork"
	"github.com/vireo-dev/vireo/localcluster/imageregistry"
)

// apiServerUID is the user vireo-apiserver's Pod runs as (artifacts/base): its hostPath data
// directory must belong to it.
const apiServerUID = 65532

// vireoDeployments are the Deployments of artifacts/local that Up waits for.
var vireoDeployments = []string{"vireo-apiserver", "vireo-controller"}

// manifestsDir is where Up renders artifacts/base through artifacts/local.
func (c *Cluster) manifestsDir() string { return filepath.Join(c.opts.Root, "manifests") }

// VireoCAFile is the CA of vireo-apiserver's serving certificate (the APIServices' caBundle).
func (c *Cluster) VireoCAFile() string {
	return filepath.Join(c.manifestsDir(), "base", "certs", "ca.crt")
}

// APIServerDataDir is vireo-apiserver's /var/lib/vireo-apiserver on the first local node,
// where its embedded etcd keeps the Vireo objects.
func (c *Cluster) APIServerDataDir() string {
	return filepath.Join(c.opts.NodeDir(c.NodeNames()[0]), "host", "var", "lib", "vireo-apiserver")
}

// deployVireo renders artifacts/base through the local overlay, with certificates for
// vireo-apiserver's Service and its Pod pinned to the first node, and applies it: Vireo runs
// on the local nodes from the same manifests as on a cluster. The objects of kinds Vireo itself
// serves (the KubeVirt settings) cannot be applied before its APIServices are available: they
// are returned, for Up to apply then.
func (c *Cluster) deployVireo(ctx context.Context, a *Applier) ([]*unstructured.Unstructured, error) {
	if !c.opts.HA {
		if err := c.prepareAPIServerData(); err != nil {
			return nil, err
		}
	}
	rendered, err := c.renderManifests()
	if err != nil {
		return nil, err
	}
	objs, err := DecodeManifests(rendered)
	if err != nil {
		return nil, err
	}
	var now, later []*unstructured.Unstructured
	for _, obj := range objs {
		if servedByVireo(obj) {
			later = append(later, obj)
		} else {
			now = append(now, obj)
		}
	}
	if err := a.Apply(ctx, now, v1.InstallNamespace); err != nil {
		return nil, err
	}
	return later, c.removeLegacyEndpoints(ctx)
}

// servedByVireo reports whether obj is of a kind vireo-apiserver serves.
func servedByVireo(obj *unstructured.Unstructured) bool {
	group := obj.GroupVersionKind().Group
	for _, gv := range APIServices {
		if gv.Group == group {
			return true
		}
	}
	return false
}

// renderManifests copies artifacts/base and artifacts/local under the root, writes the
// certificates the base's secretGenerator reads (kept across runs), names the first node and
// the registry in the overlay and runs kubectl kustomize.
func (c *Cluster) renderManifests() ([]byte, error) {
	dir := c.manifestsDir()
	for _, sub := range []string{"base", "local"} {
		if err := copyTree(filepath.Join(c.opts.ManifestsDir, sub), filepath.Join(dir, sub)); err != nil {
			return nil, fmt.Errorf("copying %s/%s: %w", c.opts.ManifestsDir, sub, err)
		}
	}
	if err := WriteArtifactCerts(filepath.Join(dir, "base", "certs")); err != nil {
		return nil, err
	}
	// The overlays' patches name this installation's first node, its registry and, with HA,
	// its vireo-etcd members.
	tokens := strings.NewReplacer("kubernetes.io/hostname: NODE", "kubernetes.io/hostname: "+c.NodeNames()[0],
		"--insecure-registry=REGISTRY", "--insecure-registry="+c.RegistryAddress(),
		"--etcd-servers=ETCD_SERVERS", "--etcd-servers="+strings.Join(c.VireoEtcdEndpoints(), ","))
	for _, patch := range []string{"apiserver.yaml", "shared/controller.yaml", "ha/apiserver.yaml"} {
		patch = filepath.Join(dir, "local", patch)
		b, err := os.ReadFile(patch)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(patch, []byte(tokens.Replace(string(b))), 0o644); err != nil {
			return nil, err
		}
	}
	overlay, err := c.writeImagesOverlay(dir, filepath.Join(dir, c.localOverlay()))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(c.abs(c.opts.Bin("kubectl")), "kustomize", overlay)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("kubectl kustomize %s: %v: %s", overlay, err, stderr.String())
	}
	return out, nil
}

// copyTree copies the regular files under src into dst (replacing what dst had, but for
// certs/, which keeps the certificates issued before).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			if rel == "certs" {
				return filepath.SkipDir
			}
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}

// prepareAPIServerData creates vireo-apiserver's data directory on the first node, owned by
// the user its Pod runs as (hostPath volumes get no fsGroup). An installation from before
// vireo-apiserver ran as a Pod kept its data under data/vireo-apiserver: it moves here.
func (c *Cluster) prepareAPIServerData() error {
	dir := c.APIServerDataDir()
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	legacy := c.opts.Data("vireo-apiserver")
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		if _, err := os.Stat(legacy); err == nil {
			c.say("moving vireo-apiserver's data from %s to %s (it now runs as a Pod)", legacy, dir)
			if err := os.Rename(legacy, dir); err != nil {
				return err
			}
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return filepath.WalkDir(dir, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, apiServerUID, apiServerUID)
	})
}

// stopLegacyComponents stops vireo-apiserver and vireo-controller processes an earlier
// version started on the host: they now run as Pods, and the old vireo-apiserver would
// hold its data.
func (c *Cluster) stopLegacyComponents() error {
	for _, name := range vireoDeployments {
		comp := Component{Name: name, Path: c.abs(c.opts.Bin(name)), Dir: &c.opts.Layout, Netns: c.opts.Network.Netns}
		if _, ok := comp.PID(); ok {
			c.say("stopping %s started by an earlier version (it now runs as a Pod)", name)
		}
		if err := comp.Stop(30 * time.Second); err != nil {
			return err
		}
	}
	return nil
}

// removeLegacyEndpoints deletes the static EndpointSlice earlier versions registered for
// vireo-apiserver: the Service's own endpoints now follow the Pod's readiness.
func (c *Cluster) removeLegacyEndpoints(ctx context.Context) error {
	client, err := c.kubeClient()
	if err != nil {
		return err
	}
	err = client.DiscoveryV1().EndpointSlices(v1.InstallNamespace).Delete(ctx, "vireo-apiserver-local", metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// waitForVireo waits until Vireo's Deployments have every replica available and its node
// agent is ready on every node: a VMI started right after `up` must find its node's agent
// serving (console, VNC and actions go through it).
func (c *Cluster) waitForVireo(ctx context.Context, timeout time.Duration) error {
	client, err := c.kubeClient()
	if err != nil {
		return err
	}
	var last string
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		for _, name := range vireoDeployments {
			d, err := client.AppsV1().Deployments(v1.InstallNamespace).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				last = err.Error()
				return false, nil
			}
			if !available(d) {
				last = fmt.Sprintf("deployment %s: %d of %d replicas available, %d updated (generation %d, observed %d)", name,
					d.Status.AvailableReplicas, ptrOr(d.Spec.Replicas, 1), d.Status.UpdatedReplicas, d.Generation, d.Status.ObservedGeneration)
				return false, nil
			}
		}
		ds, err := client.AppsV1().DaemonSets(v1.InstallNamespace).Get(ctx, nodeAgentDaemonSet, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		if st := ds.Status; st.ObservedGeneration < ds.Generation || st.DesiredNumberScheduled != int32(len(c.NodeNames())) ||
			st.UpdatedNumberScheduled != st.DesiredNumberScheduled || st.NumberReady != st.DesiredNumberScheduled {
			last = fmt.Sprintf("daemonset %s: %d of %d node agents ready (%d up to date)", nodeAgentDaemonSet, st.NumberReady, len(c.NodeNames()), st.UpdatedNumberScheduled)
			return false, nil
		}
		if last = c.nodesWithoutDevices(ctx, client); last != "" {
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("Vireo's Deployments and node agents not available within %s: %s (kubectl -n vireo-system get pods; the nodes' logs are in %s)", timeout, last, c.opts.Logs())
	}
	return nil
}

// nodesWithoutDevices names the first node whose kubelet does not yet offer the device every
// launcher Pod requests (devices.kubevirt.io/tun, from its node agent's device plugin), or
// returns "". A node agent is ready before its kubelet reports the device in the Node's
// status: a VMI created in between would fail to schedule ("Insufficient
// devices.kubevirt.io/tun") until the scheduler tried again.
func (c *Cluster) nodesWithoutDevices(ctx context.Context, client kubernetes.Interface) string {
	for _, name := range c.NodeNames() {
		node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if q, ok := node.Status.Allocatable[podnetwork.TunResourceName]; !ok || q.IsZero() {
			return fmt.Sprintf("node %s offers no %s yet (its node agent's device plugin)", name, podnetwork.TunResourceName)
		}
	}
	return ""
}

// nodeAgentDaemonSet is the node agent's DaemonSet in artifacts/base.
const nodeAgentDaemonSet = "vireo-nodeagent"

func available(d *appsv1.Deployment) bool {
	return d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas == ptrOr(d.Spec.Replicas, 1) &&
		d.Status.AvailableReplicas == ptrOr(d.Spec.Replicas, 1)
}

func ptrOr(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}

// localOverlay is the overlay Up applies, under the artifacts directory: local, or local/ha.
func (c *Cluster) localOverlay() string {
	if c.opts.HA {
		return "local/ha"
	}
	return "local"
}

// writeImagesOverlay writes the overlay that runs the local overlay's Vireo from the images
// make oci built, as the registry serves them (vireo/<name>, by digest), and returns its
// directory.
func (c *Cluster) writeImagesOverlay(dir, local string) (string, error) {
	results, err := imagebuild.Built(c.abs(c.opts.OCIDir()))
	if err != nil {
		return "", err
	}
	var pushed []imagebuild.Pushed
	for _, r := range results {
		pushed = append(pushed, imagebuild.Pushed{Name: r.Name, Digest: r.Digest,
			Ref: c.RegistryAddress() + "/" + imageregistry.RepositoryPrefix + r.Name + "@" + r.Digest})
	}
	overlay := filepath.Join(dir, "images")
	return overlay, imagebuild.WriteOverlay(overlay, local, pushed)
}
