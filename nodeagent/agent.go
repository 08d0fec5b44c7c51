// Package nodeagent is vireo-nodeagent, the per-node agent. It watches the VMIs scheduled to its
// node (field selector status.nodeName) and the launcher, upload and clone source Pods on it,
// reaches each such Pod's emptyDir "run" below the kubelet's Pod directories, connects to each
// launcher's command socket there, hands it its VMI (the kubelet pulls its images), follows its
// domain events, serves the kubelet the device plugin for devices.kubevirt.io/kvm, and reports
// the VMI's status: Running with interfaces and conditions, then Succeeded or Failed. It shuts
// guests down when their VMI is deleted (ACPI, then destroy after the grace period, a deadline
// kept on disk in its run directory across restarts), and serves vireo-apiserver over mutual
// TLS: console and VNC streams, screenshots, the VMI actions pause, unpause and softreboot, and
// the relay of DataVolume uploads to their upload Pod's socket.
package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/generated/clientset/versioned"
	vireoinformers "github.com/vireo-dev/vireo/generated/informers/externalversions"
	vireolisters "github.com/vireo-dev/vireo/generated/listers/core/v1"
	"github.com/vireo-dev/vireo/internal/clusterconfig"
	"github.com/vireo-dev/vireo/internal/metricsserver"
	"github.com/vireo-dev/vireo/internal/nodeagentapi"
	"github.com/vireo-dev/vireo/internal/reconcile"
	"github.com/vireo-dev/vireo/launcher/protocol"
	"github.com/vireo-dev/vireo/launcher/protocol/capsseed"
)

// Options are vireo-nodeagent's command-line options.
type Options struct {
	Kubeconfig  string
	NodeName    string
	RunDir      string
	Listen      string
	TLSCertFile string
	TLSKeyFile  string
	// ClientCAFile verifies vireo-apiserver's client certificate; ClientName is its common name.
	ClientCAFile string
	ClientName   string
	Workers      int
	// CapabilitiesProbeDir holds QEMU's capabilities as the init container probed them;
	// CapabilitiesDir is the node's seed the agent copies them to, mounted read-only into
	// launcher Pods (package capsseed).
	CapabilitiesProbeDir, CapabilitiesDir string
	// StreamPing is the keep-alive period of console and VNC sessions.
	StreamPing time.Duration
	// MigrationAddress is where other node agents reach this one for migrations (default:
	// $POD_IP and the port of Listen).
	MigrationAddress string
	// MetricsPort serves /metrics over HTTPS, callers authorized by kube-apiserver (0: off).
	MetricsPort int
	// KubeletPodsDir is the kubelet's Pod directories, where the emptyDirs of launcher, upload
	// and clone source Pods are.
	KubeletPodsDir string
	// DevicePluginDir is the kubelet's device-plugins directory, where the agent serves
	// devices.kubevirt.io/kvm (empty: no device plugin).
	DevicePluginDir string
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{RunDir: "/var/run/vireo", Listen: ":" + strconv.Itoa(nodeagentapi.Port),
		ClientName: "vireo-apiserver", Workers: 4, MetricsPort: metricsserver.DefaultPort, StreamPing: 30 * time.Second,
		CapabilitiesDir: capsseed.DefaultDir, DevicePluginDir: filepath.Dir(pluginapi.KubeletSocket),
		KubeletPodsDir: protocol.KubeletPodsDir}
}

// AddFlags registers the options.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Kubeconfig to reach the cluster; empty means in-cluster.")
	fs.StringVar(&o.NodeName, "node-name", o.NodeName, "The node this agent serves (required; the DaemonSet passes spec.nodeName).")
	fs.StringVar(&o.RunDir, "run-dir", o.RunDir, "The agent's own directory on the node (guests' shutdown deadlines, kept across restarts).")
	fs.StringVar(&o.Listen, "listen", o.Listen, "Address of the HTTPS server for vireo-apiserver.")
	fs.StringVar(&o.TLSCertFile, "tls-cert-file", o.TLSCertFile, "Serving certificate of the HTTPS server.")
	fs.StringVar(&o.TLSKeyFile, "tls-private-key-file", o.TLSKeyFile, "Key of the serving certificate.")
	fs.StringVar(&o.ClientCAFile, "client-ca-file", o.ClientCAFile, "CA of vireo-apiserver's client certificate; no other client is accepted.")
	fs.StringVar(&o.ClientName, "client-name", o.ClientName, "Common name of vireo-apiserver's client certificate.")
	fs.IntVar(&o.Workers, "workers", o.Workers, "Concurrent VMI reconciles.")
	fs.StringVar(&o.CapabilitiesProbeDir, "capabilities-probe-dir", o.CapabilitiesProbeDir, "QEMU capabilities probed by the agent Pod's init container (vireo-launcher probe-capabilities); none when empty.")
	fs.StringVar(&o.CapabilitiesDir, "capabilities-dir", o.CapabilitiesDir, "The node's capabilities seed, which the agent copies into each launcher Pod's emptyDir.")
	fs.IntVar(&o.MetricsPort, "metrics-port", o.MetricsPort, "HTTPS port of /metrics (KubeVirt's kubevirt_vmi_migration_* gauges of the migrations leaving this node), for callers kube-apiserver authenticates and authorizes for get /metrics; 0 turns it off.")
	fs.StringVar(&o.MigrationAddress, "migration-address", o.MigrationAddress, "host:port where other node agents reach this one for live migrations; default $POD_IP and the port of --listen.")
	fs.StringVar(&o.KubeletPodsDir, "kubelet-pods-dir", o.KubeletPodsDir, "The kubelet's Pod directories (its --root-dir's pods/), where the agent reaches the emptyDir of sockets of each launcher, upload and clone source Pod.")
	fs.StringVar(&o.DevicePluginDir, "device-plugin-dir", o.DevicePluginDir, "The kubelet's device-plugins directory, where the agent serves devices.kubevirt.io/kvm, healthy where the node's KVM can run ordinary guests; empty turns the device plugin off.")
	fs.DurationVar(&o.StreamPing, "stream-ping", o.StreamPing, "Keep-alive ping period of console and VNC sessions; a client silent for three periods is dropped.")
}

// Agent is a running node agent.
type Agent struct {
	*reconcile.Loop
	opts    *Options
	client  versioned.Interface
	kube    kubernetes.Interface
	vmis    vireolisters.VirtualMachineInstanceLister
	pods    corelisters.PodLister
	dirs    nodeDirs
	now     func() metav1.Time
	written reconcile.WrittenVersions

	mu       sync.Mutex
	ctx      context.Context
	sessions map[types.UID]*session // by launcher Pod UID
	// migrations are this agent's steps in live migrations, by migration UID.
	migrations map[types.UID]*migrationWork
	// settings are the cluster's (the KubeVirt object's), read live.
	settings *clusterconfig.Config
	// targetVMIs are the VMIs migrating to this node from another (kubevirt.io/migrationTargetNodeName).
	targetVMIs vireolisters.VirtualMachineInstanceLister
	// peers is the TLS between node agents (migrations between nodes).
	peers   *peerTLS
	streams *streams // console and VNC sessions
	// seeded are the launcher Pods whose capabilities seed is copied or being copied.
	seeded map[types.UID]bool
	// cloneRelays serve the upload socket of clone source Pods, by Pod UID.
	cloneRelays map[types.UID]*socketProxy
}

// Run runs the node agent until ctx ends.
func Run(ctx context.Context, o *Options) error {
	if o.NodeName == "" {
		return errors.New("--node-name is required: the node this agent serves")
	}
	if o.StreamPing <= 0 {
		return fmt.Errorf("--stream-ping %s: must be positive", o.StreamPing)
	}
	if o.KubeletPodsDir == "" {
		return errors.New("--kubelet-pods-dir is required: where the agent finds the Pods' emptyDirs")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	if err != nil {
		return fmt.Errorf("loading kubeconfig %q: %w", o.Kubeconfig, err)
	}
	cfg.UserAgent = "vireo-nodeagent/" + o.NodeName
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	vireo, err := versioned.NewForConfig(cfg)
	if err != nil {
		return err
	}
	dirs := nodeDirs{root: o.RunDir, pods: o.KubeletPodsDir}
	if err := dirs.ensureBase(); err != nil {
		return fmt.Errorf("preparing the run directory: %w", err)
	}
	seedCapabilities(o)
	vf := vireoinformers.NewSharedInformerFactoryWithOptions(vireo, 10*time.Minute, vireoinformers.WithTweakListOptions(func(lo *metav1.ListOptions) {
		lo.FieldSelector = fields.OneTermEqualSelector("status.nodeName", o.NodeName).String()
	}))
	kf := kubeinformers.NewSharedInformerFactoryWithOptions(kube, 10*time.Minute, kubeinformers.WithTweakListOptions(func(lo *metav1.ListOptions) {
		lo.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", o.NodeName).String()
		lo.LabelSelector = v1.AppLabel + " in (" + v1.LauncherApp + "," + v1.UploadApp + "," + v1.CloneSourceApp + ")"
	}))
	a := &Agent{opts: o, client: vireo, kube: kube, dirs: dirs,
		now: metav1.Now, ctx: ctx, sessions: map[types.UID]*session{}, streams: newStreams(o.StreamPing),
		migrations: map[types.UID]*migrationWork{}, seeded: map[types.UID]bool{}, cloneRelays: map[types.UID]*socketProxy{}}
	sf := vireoinformers.NewSharedInformerFactoryWithOptions(vireo, 10*time.Minute, vireoinformers.WithNamespace(v1.InstallNamespace))
	if a.settings, err = clusterconfig.New(sf.Kubevirt().V1().KubeVirts()); err != nil {
		return err
	}
	if a.peers, err = loadPeerTLS(o); err != nil {
		klog.ErrorS(err, "No migrations between nodes from or to this node")
	}
	tf := vireoinformers.NewSharedInformerFactoryWithOptions(vireo, 10*time.Minute, vireoinformers.WithTweakListOptions(func(lo *metav1.ListOptions) {
		lo.LabelSelector = v1.MigrationTargetNodeNameLabel + "=" + o.NodeName
	}))
	targetInformer := tf.Kubevirt().V1().VirtualMachineInstances()
	a.targetVMIs = targetInformer.Lister()
	vmiInformer := vf.Kubevirt().V1().VirtualMachineInstances()
	podInformer := kf.Core().V1().Pods()
	a.vmis, a.pods = vmiInformer.Lister(), podInformer.Lister()
	a.Loop = reconcile.NewLoop("nodeagent", a.sync, vmiInformer.Informer().HasSynced, podInformer.Informer().HasSynced)
	for _, inf := range []cache.SharedIndexInformer{vmiInformer.Informer(), targetInformer.Informer()} {
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: a.Enqueue, UpdateFunc: func(_, obj any) { a.Enqueue(obj) }, DeleteFunc: a.Enqueue,
		}); err != nil {
			return err
		}
	}
	if _, err := vmiInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) { a.vmiUpdated(obj) }, DeleteFunc: a.endStreamsOnStop,
	}); err != nil {
		return err
	}
	if _, err := podInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: a.podChanged, UpdateFunc: func(_, obj any) { a.podChanged(obj) }, DeleteFunc: a.podDeleted,
	}); err != nil {
		return err
	}
	vf.Start(ctx.Done())
	kf.Start(ctx.Done())
	sf.Start(ctx.Done())
	tf.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), vmiInformer.Informer().HasSynced, podInformer.Informer().HasSynced, a.settings.HasSynced, targetInformer.Informer().HasSynced) {
		return ctx.Err()
	}
	a.collectGarbage(ctx)
	srv, err := newServer(o, a.peers, func(mux *http.ServeMux) {
		a.registerStreams(mux)
		a.registerActions(mux)
		a.registerUploads(mux)
		a.registerMigrations(mux)
	})
	if err != nil {
		return err
	}
	errc := make(chan error, 4)
	go a.streams.run(ctx)
	go func() { errc <- serveKVMDevicePlugin(ctx, o.DevicePluginDir) }()
	go func() { errc <- a.serveMetrics(ctx) }()
	go func() { errc <- srv.run(ctx) }()
	go func() { errc <- a.Loop.Run(ctx, o.Workers) }()
	klog.InfoS("vireo-nodeagent running", "node", o.NodeName, "runDir", o.RunDir)
	err = <-errc
	a.streams.closeAll()
	a.stopSessions()
	return err
}

// seedCapabilities offers launchers the capabilities the init container probed. Without a
// seed each launcher's libvirtd probes QEMU itself: slower, not wrong, so failures are logged.
// serveMetrics serves /metrics until ctx ends (not at all with --metrics-port 0).
func (a *Agent) serveMetrics(ctx context.Context) error {
	if a.opts.MetricsPort == 0 {
		<-ctx.Done()
		return ctx.Err()
	}
	registerMigrationMetrics()
	m := metricsserver.NewOptions("vireo-nodeagent")
	m.Serving.BindPort = a.opts.MetricsPort
	if err := m.Serve(ctx, a.opts.Kubeconfig); err != nil {
		// Metrics are no reason to stop driving guests.
		klog.ErrorS(err, "No /metrics")
	}
	<-ctx.Done()
	return ctx.Err()
}

func seedCapabilities(o *Options) {
	if o.CapabilitiesProbeDir == "" || o.CapabilitiesDir == "" {
		return
	}
	n, err := capsseed.Copy(o.CapabilitiesProbeDir, o.CapabilitiesDir, 0o644, nil)
	if err != nil {
		klog.ErrorS(err, "Launchers on this node will probe QEMU's capabilities themselves")
		return
	}
	klog.InfoS("Seeded QEMU capabilities for launchers", "files", n, "dir", o.CapabilitiesDir)
}

// podChanged prepares what a launcher Pod or a clone's source Pod needs of the agent (a
// launcher's capabilities seed, a source's relay) and requeues a launcher's VMI.
func (a *Agent) podChanged(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	switch pod.Labels[v1.AppLabel] {
	case v1.CloneSourceApp:
		a.relayClone(pod)
	case v1.LauncherApp:
		if pod.DeletionTimestamp == nil && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
			a.seedOnce(pod)
		}
	}
	a.enqueueVMIOf(pod)
}

// seedOnce copies the node's QEMU capabilities into launcher Pod pod's emptyDir as soon as the
// kubelet has created it, which is before the launcher starts: its libvirtd then need not
// probe QEMU (2-3 s). One copy per Pod; a failure is logged (the launcher probes itself).
func (a *Agent) seedOnce(pod *corev1.Pod) {
	if a.opts.CapabilitiesDir == "" {
		return
	}
	a.mu.Lock()
	if a.seeded[pod.UID] {
		a.mu.Unlock()
		return
	}
	a.seeded[pod.UID] = true
	a.mu.Unlock()
	go func() {
		began := time.Now()
		for ; time.Since(began) < seedWait && a.ctx.Err() == nil; time.Sleep(seedPollAfter(time.Since(began))) {
			done, err := a.dirs.seedLauncher(pod.UID, a.opts.CapabilitiesDir)
			if err != nil {
				klog.ErrorS(err, "Copying the capabilities seed into the launcher Pod", "pod", klog.KObj(pod))
				return
			}
			if done {
				return
			}
		}
	}()
}

// seedWait bounds how long the agent waits for a launcher Pod's emptyDir (the kubelet creates
// it once the Pod's image volumes are pulled).
const seedWait = 5 * time.Minute

// seedPollAfter is how often the agent looks for the emptyDir, elapsed into the wait: often
// while the kubelet is about to create it, rarely once an image pull is taking long.
func seedPollAfter(elapsed time.Duration) time.Duration {
	if elapsed < 10*time.Second {
		return 20 * time.Millisecond
	}
	return time.Second
}

// podDeleted forgets a Pod: a launcher's session, migrations, seed and shutdown deadline, a
// clone source's relay.
func (a *Agent) podDeleted(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	a.forgetPod(pod.UID)
	a.enqueueVMIOf(pod)
}

func (a *Agent) forgetPod(uid types.UID) {
	a.mu.Lock()
	s := a.sessions[uid]
	delete(a.sessions, uid)
	a.mu.Unlock()
	if s != nil {
		s.stop()
	}
	a.endMigrationsFrom(uid)
	a.stopCloneRelay(uid)
	a.mu.Lock()
	delete(a.seeded, uid)
	a.mu.Unlock()
	a.dirs.clearDeadline(uid)
}

func (a *Agent) enqueueVMIOf(pod *corev1.Pod) {
	for _, ref := range pod.OwnerReferences {
		if ref.Kind == "VirtualMachineInstance" {
			a.EnqueueKey(pod.Namespace + "/" + ref.Name)
		}
	}
}

// collectGarbage forgets the Pods that have a shutdown deadline in the agent's directory but
// no longer exist on this node (deleted while the agent was down), clearing their deadlines.
func (a *Agent) collectGarbage(ctx context.Context) {
	uids, err := a.dirs.deadlines()
	if err != nil {
		klog.FromContext(ctx).Error(err, "Listing shutdown deadlines")
		return
	}
	pods, _ := a.pods.List(labels.Everything())
	live := map[types.UID]bool{}
	for _, p := range pods {
		live[p.UID] = true
	}
	for _, uid := range uids {
		if !live[uid] {
			a.forgetPod(uid)
		}
	}
}

func (a *Agent) stopSessions() {
	a.mu.Lock()
	sessions := a.sessions
	a.sessions = map[types.UID]*session{}
	a.mu.Unlock()
	for _, s := range sessions {
		s.stop()
	}
}
