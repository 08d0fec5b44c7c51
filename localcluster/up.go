package localcluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/localcluster/pki"
)

// Options configure an installation.
type Options struct {
	Layout
	Network Network
	Ports   Ports
	// ManifestsDir is the repository's artifacts directory (RBAC is applied from it).
	ManifestsDir string
	// Nodes is the number of local nodes; 0 means as many as the last Up started (one when
	// none did).
	Nodes int
	// HA runs the control plane as artifacts/base does on a cluster: two vireo-apiserver
	// replicas serving from a three-member etcd (on the host), two vireo-controller replicas.
	// An installation keeps the mode it was made with (see checkHAMode).
	HA bool
	// Examples are manifests created once the API is ready (the demo objects).
	Examples []string
	// ControlPlaneQPS, when set, is the client QPS (and half the burst) of kube-scheduler and
	// kube-controller-manager toward kube-apiserver. Their defaults (50 and 20) bind at most 50
	// Pods a second, which a scale test creating VMIs faster would measure instead of Vireo.
	ControlPlaneQPS int
	Out             io.Writer
}

// DefaultOptions are those of `make up`.
func DefaultOptions(out io.Writer) Options {
	return Options{
		Layout:       Layout{Root: "_output/local", BinDir: "_output/bin"},
		Network:      DefaultNetwork(),
		Ports:        DefaultPorts(),
		ManifestsDir: "artifacts",
		Out:          out,
	}
}

// Cluster is a single-machine installation.
type Cluster struct {
	opts Options
	ca   *pki.CA
	// issuing serializes UserConfig's issue of client certificates: a key and its certificate
	// are two files, and two issues of one user at once could pair one's key with the other's
	// certificate.
	issuing sync.Mutex
}

// New prepares an installation; nothing starts until Up.
func New(opts Options) *Cluster { return &Cluster{opts: opts} }

// Options returns the installation's options.
func (c *Cluster) Options() Options { return c.opts }

// Up starts whatever is not running, in order, and returns once every APIService is
// Available. It is idempotent. On failure it stops what this call started and reports
// the failing component's log.
func (c *Cluster) Up(ctx context.Context) (err error) {
	var started []Component
	defer func() {
		if err != nil {
			c.stopAll(started)
		}
	}()
	if err := c.checkNodeRuntime(); err != nil {
		return err
	}
	if err := c.checkNodeCount(); err != nil {
		return err
	}
	if err := c.checkHAMode(); err != nil {
		return err
	}
	if err := c.stopLegacyComponents(); err != nil {
		return err
	}
	c.say("preparing bridge %s (%s)", c.opts.Network.Bridge(), c.opts.Network.HostIP)
	if err := c.opts.Network.Ensure(); err != nil {
		return err
	}
	if err := c.recordOptions(); err != nil {
		return err
	}
	if err := c.certificates(); err != nil {
		return fmt.Errorf("creating certificates in %s: %w", c.opts.PKI(), err)
	}
	if err := c.writeKubeconfigs(); err != nil {
		return err
	}
	for _, comp := range []Component{c.etcd(), c.kubeAPIServer()} {
		if err := c.startAndWait(ctx, comp, &started); err != nil {
			return err
		}
	}
	if err := c.startVireoEtcd(ctx, &started); err != nil {
		return err
	}
	applier, err := c.applier()
	if err != nil {
		return err
	}
	c.say("applying Vireo's namespace, RBAC and the default StorageClass")
	if err := c.bootstrap(ctx, applier); err != nil {
		return err
	}
	for _, comp := range []Component{c.controllerManager(), c.scheduler(), c.registry()} {
		if err := c.startAndWait(ctx, comp, &started); err != nil {
			return err
		}
	}
	if err := c.startNodes(ctx, &started); err != nil {
		return err
	}
	c.say("deploying Vireo from %s/base through %s/%s on the local nodes", c.opts.ManifestsDir, c.opts.ManifestsDir, c.localOverlay())
	served, err := c.deployVireo(ctx, applier)
	if err != nil {
		return err
	}
	// A rollout waits for node agents that let the migrations they carry end (2m at most).
	if err := c.waitForVireo(ctx, 4*time.Minute); err != nil {
		return err
	}
	c.say("waiting until APIServices %s are Available, in discovery and in OpenAPI", apiServiceNames())
	if err := c.WaitForAPIServices(ctx, 90*time.Second); err != nil {
		return err
	}
	if len(served) > 0 {
		c.say("applying Vireo's settings (%s)", objectNames(served))
		if err := applier.Apply(ctx, served, v1.InstallNamespace); err != nil {
			return fmt.Errorf("applying the objects vireo-apiserver serves: %w", err)
		}
	}
	for _, f := range c.opts.Examples {
		if err := applier.CreateFile(ctx, f, "default"); err != nil {
			return fmt.Errorf("creating the demo objects: %w", err)
		}
		c.say("created the objects of %s (existing ones are left alone; a VMI that had ended is created anew)", f)
	}
	if err := c.startAndWait(ctx, c.Supervisor(), &started); err != nil {
		return err
	}
	c.say("Vireo is up; kubeconfig: %s", c.abs(c.opts.Kubeconfig()))
	return nil
}

// objectNames names objects as kind namespace/name, for messages.
func objectNames(objs []*unstructured.Unstructured) string {
	var names []string
	for _, o := range objs {
		names = append(names, o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName())
	}
	return strings.Join(names, ", ")
}

func apiServiceNames() string {
	var names []string
	for _, gv := range APIServices {
		names = append(names, gv.Version+"."+gv.Group)
	}
	return strings.Join(names, ", ")
}

// bootstrap applies what must exist before Vireo's components start.
func (c *Cluster) bootstrap(ctx context.Context, a *Applier) error {
	base := `apiVersion: v1
kind: Namespace
metadata: {name: vireo-system}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: local-hostpath
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: kubernetes.io/host-path
reclaimPolicy: Delete
volumeBindingMode: Immediate
`
	objs, err := DecodeManifests([]byte(base + kubeletAPIBinding))
	if err != nil {
		return err
	}
	if err := a.Apply(ctx, objs, ""); err != nil {
		return err
	}
	for _, f := range []string{"roles.yaml", "apiserver.yaml", "controller.yaml", "nodeagent.yaml"} {
		path := filepath.Join(c.opts.ManifestsDir, "base", "rbac", f)
		if err := a.ApplyFile(ctx, path, v1.InstallNamespace); err != nil {
			return fmt.Errorf("applying %s: %w", path, err)
		}
	}
	return nil
}

// kubeletAPIBinding lets kube-apiserver's kubelet client use the nodes' API (logs, exec,
// port-forward), through the bootstrap ClusterRole kubeadm binds it to.
const kubeletAPIBinding = `---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: vireo-local:kube-apiserver-kubelet-client}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:kubelet-api-admin"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: ` + kubeletClientUser + `}]
`

func (c *Cluster) applier() (*Applier, error) {
	cfg, err := c.RESTConfig()
	if err != nil {
		return nil, err
	}
	return NewApplier(cfg)
}

// startAndWait starts comp unless it runs, records it as wanted (so the supervisor restarts
// it should it crash), then waits until it is ready.
func (c *Cluster) startAndWait(ctx context.Context, comp Component, started *[]Component) error {
	if err := c.start(comp, started); err != nil {
		return err
	}
	return c.waitReady(ctx, comp)
}

// start starts comp unless it runs and records it as wanted, so the supervisor restarts it
// should it crash.
func (c *Cluster) start(comp Component, started *[]Component) error {
	return comp.withLock(func() error {
		st, err := comp.LoadState()
		if err != nil {
			return err
		}
		if pid, ok := comp.PID(); ok {
			c.say("%s already running (pid %d)", comp.Name, pid)
			if st.Wanted {
				return nil
			}
			// Started by a vireo-local without supervision: adopt it.
			st.Wanted, st.DiedAt = true, time.Time{}
			if fi, err := os.Stat(comp.PIDFile()); err == nil && st.StartedAt.IsZero() {
				st.StartedAt = fi.ModTime()
			}
			return comp.saveState(st)
		}
		if _, err := os.Stat(comp.Path); err != nil {
			return fmt.Errorf("%s: binary %s missing; run `make build` and hack/build-upstream.sh first", comp.Name, comp.Path)
		}
		c.say("starting %s (log: %s)", comp.Name, comp.LogFile())
		if err := comp.Start(); err != nil {
			return err
		}
		*started = append(*started, comp)
		next := State{Wanted: true, StartedAt: time.Now()}
		if st.Wanted { // it crashed: keep counting
			next.Restarts = st.Restarts
		}
		return comp.saveState(next)
	})
}

// Restart stops and starts one component and waits until it is ready. It holds the
// component's lock while the process is down, so the supervisor leaves it alone, and it
// does not count as a restart after a crash.
func (c *Cluster) Restart(ctx context.Context, name string) error {
	comp, err := c.Component(name)
	if err != nil {
		return err
	}
	c.say("restarting %s", name)
	err = comp.withLock(func() error {
		if err := comp.Stop(30 * time.Second); err != nil {
			return err
		}
		if err := comp.Start(); err != nil {
			return err
		}
		st, err := comp.LoadState()
		if err != nil {
			return err
		}
		st.Wanted, st.StartedAt, st.DiedAt, st.Streak = true, time.Now(), time.Time{}, 0
		return comp.saveState(st)
	})
	if err != nil {
		return err
	}
	return c.waitReady(ctx, comp)
}

// StopComponent stops one component until StartComponent (or the next Up) starts it: the
// supervisor leaves it stopped. It is how a test takes a node's kubelet away.
func (c *Cluster) StopComponent(name string) error {
	comp, err := c.Component(name)
	if err != nil {
		return err
	}
	return c.stop(comp, 30*time.Second)
}

// StopSupervisor stops the supervisor until the next Up starts it again, with that Up's
// options (an upgrade's new manifests).
func (c *Cluster) StopSupervisor() error { return c.stop(c.Supervisor(), 30*time.Second) }

// StartComponent starts one component StopComponent stopped and waits until it is ready.
func (c *Cluster) StartComponent(ctx context.Context, name string) error {
	comp, err := c.Component(name)
	if err != nil {
		return err
	}
	var started []Component
	return c.startAndWait(ctx, comp, &started)
}

// Down stops every component; purge also deletes data, certificates, logs and the network namespace.
func (c *Cluster) Down(purge bool) error {
	// The supervisor first, so that it does not restart what Down stops.
	comps := append([]Component{c.Supervisor()}, c.Components()...)
	if err := c.stop(comps[0], 30*time.Second); err != nil {
		return err
	}
	for i := len(comps) - 1; i > 0; i-- {
		if err := c.stop(comps[i], 30*time.Second); err != nil {
			return err
		}
	}
	for _, name := range c.NodeNames() {
		if err := c.stopKubeletNodeContainers(name); err != nil {
			return err
		}
	}
	for pid, ns := range killNetnsStragglers(c.opts.Network, c.nodeCount()) {
		c.say("killed process %d: it was still running in network namespace %s after its node stopped", pid, ns)
	}
	if !purge {
		return nil
	}
	c.say("deleting %s and network namespace %s", c.opts.Root, c.opts.Network.Netns)
	for i := range c.nodeCount() {
		if err := c.opts.Network.DeleteNode(i); err != nil {
			return err
		}
	}
	if err := c.opts.Network.Delete(); err != nil {
		return err
	}
	return os.RemoveAll(c.opts.Root)
}

func (c *Cluster) waitReady(ctx context.Context, comp Component) error {
	var lastErr error
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		if _, alive := comp.PID(); !alive {
			return false, fmt.Errorf("%s exited", comp.Name)
		}
		if comp.Ready == nil {
			return true, nil
		}
		lastErr = comp.Ready(ctx)
		return lastErr == nil, nil
	})
	if err != nil {
		return fmt.Errorf("%s did not become ready (%v; last probe: %v). Log %s ends with:\n%s",
			comp.Name, err, lastErr, comp.LogFile(), comp.LogTail(20))
	}
	return nil
}

// apiReady checks kube-apiserver's /readyz as the admin.
func (c *Cluster) apiReady(ctx context.Context) error {
	cfg, err := c.RESTConfig()
	if err != nil {
		return err
	}
	client, err := rest.UnversionedRESTClientFor(withNegotiatedSerializer(cfg))
	if err != nil {
		return err
	}
	_, err = client.Get().AbsPath("/readyz").DoRaw(ctx)
	return err
}

func (c *Cluster) loadCA() error {
	if c.ca != nil {
		return nil
	}
	ca, err := pki.LoadOrCreateCA(c.opts.PKI(), "ca", "vireo-local-ca")
	c.ca = ca
	return err
}

func (c *Cluster) stopAll(comps []Component) {
	for i := len(comps) - 1; i >= 0; i-- {
		_ = c.stop(comps[i], 10*time.Second)
	}
}

// stop stops comp for good: no longer wanted, so the supervisor does not bring it back.
func (c *Cluster) stop(comp Component, grace time.Duration) error {
	return comp.withLock(func() error {
		st, err := comp.LoadState()
		if err != nil || st.Wanted { // an unreadable state is replaced
			st.Wanted, st.DiedAt = false, time.Time{}
			if err := comp.saveState(st); err != nil {
				return err
			}
		}
		if pid, ok := comp.PID(); ok {
			c.say("stopping %s (pid %d)", comp.Name, pid)
		}
		return comp.Stop(grace)
	})
}

func (c *Cluster) say(format string, args ...any) {
	if c.opts.Out != nil {
		fmt.Fprintf(c.opts.Out, format+"\n", args...)
	}
}
