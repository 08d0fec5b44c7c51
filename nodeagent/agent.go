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
//
// Its rooms: launchersession (the connections to launchers), streams (console, VNC,
// screenshots), migration (live migrations and the TLS between node agents), uploadrelay
// (uploads and clones), deviceplugin (devices.kubevirt.io/kvm), nodedirs (the node's
// directories, without following links) and relay (splicing connections). This package wires
// them: New builds the agent, Run drives it; its informers' handlers only enqueue, into a queue
// of VMIs and one of Pods.
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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
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
	"github.com/vireo-dev/vireo/internal/apiclient"
	"github.com/vireo-dev/vireo/internal/clusterconfig"
	"github.com/vireo-dev/vireo/internal/metricsserver"
	"github.com/vireo-dev/vireo/internal/nodeagentapi"
	"github.com/vireo-dev/vireo/internal/reconcile"
	"github.com/vireo-dev/vireo/launcher/protocol"
	"github.com/vireo-dev/vireo/launcher/protocol/capsseed"
	"github.com/vireo-dev/vireo/nodeagent/deviceplugin"
	"github.com/vireo-dev/vireo/nodeagent/launchersession"
	"github.com/vireo-dev/vireo/nodeagent/migration"
	"github.com/vireo-dev/vireo/nodeagent/nodedirs"
	"github.com/vireo-dev/vireo/nodeagent/streams"
	"github.com/vireo-dev/vireo/nodeagent/uploadrelay"
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
	// devices.kubevirt.io/kvm and devices.kubevirt.io/tun (empty: no device plugin).
	DevicePluginDir string
	// NetworkHelperDir holds the socket of the node's network helper (networkhelper), shared
	// with the helper's container.
	NetworkHelperDir string
	// MigrationDrainTimeout bounds how long the agent, asked to exit, waits for the
	// migrations it carries to end (its Pod's terminationGracePeriodSeconds must exceed it).
	MigrationDrainTimeout time.Duration
}

// DefaultNetworkHelperDir is where the agent and its network helper share the helper's socket.
const DefaultNetworkHelperDir = "/var/run/vireo-network"

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{RunDir: "/var/run/vireo", Listen: ":" + strconv.Itoa(nodeagentapi.Port),
		ClientName: "vireo-apiserver", Workers: 4, MetricsPort: metricsserver.DefaultPort, StreamPing: 30 * time.Second,
		CapabilitiesDir: capsseed.DefaultDir, DevicePluginDir: filepath.Dir(pluginapi.KubeletSocket),
		KubeletPodsDir: protocol.KubeletPodsDir, NetworkHelperDir: DefaultNetworkHelperDir, MigrationDrainTimeout: 2 * time.Minute}
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
	fs.StringVar(&o.NetworkHelperDir, "network-helper-dir", o.NetworkHelperDir, "Directory of the socket of the node's network helper (vireo-nodeagent network-helper), which sets up the masquerade binding in launcher Pods; empty: none, and VMIs with an interface cannot start.")
	fs.DurationVar(&o.MigrationDrainTimeout, "migration-drain-timeout", o.MigrationDrainTimeout, "Asked to exit (SIGTERM), how long the agent waits for the live migrations whose bytes it carries to end, starting no new one; those still running then fail. Keep the Pod's terminationGracePeriodSeconds above it.")
	fs.DurationVar(&o.StreamPing, "stream-ping", o.StreamPing, "Keep-alive ping period of console and VNC sessions; a client silent for three periods is dropped.")
}

// Agent is a node agent: New builds it, Run drives it.
type Agent struct {
	// Loop is the queue of this node's VMIs (and those migrating to it); pods is the queue of
	// the launcher, upload and clone source Pods on it.
	*reconcile.Loop
	pods *reconcile.Loop

	opts    *Options
	client  versioned.Interface
	kube    kubernetes.Interface
	vmis    vireolisters.VirtualMachineInstanceLister
	podList corelisters.PodLister
	// targetVMIs are the VMIs migrating to this node from another (kubevirt.io/migrationTargetNodeName).
	targetVMIs vireolisters.VirtualMachineInstanceLister
	dirs       nodedirs.Dirs
	network    PodNetwork
	now        func() metav1.Time
	written    reconcile.WrittenVersions
	// settings are the cluster's (the KubeVirt object's), read live.
	settings *clusterconfig.Config
	// peers is the TLS between node agents (nil: no migrations between nodes).
	peers *migration.PeerTLS
	// informers start in Run; synced says when their caches are full.
	informers []interface{ Start(<-chan struct{}) }
	synced    []cache.InformerSynced

	sessions   *launchersession.Registry
	streams    *streams.Server
	migrations *migration.Manager
	uploads    *uploadrelay.Relay

	mu sync.Mutex
	// podUIDs are the UIDs of the Pods the Pod queue saw, by key: a Pod gone (or replaced by
	// one of the same name) is forgotten by its UID.
	podUIDs map[string]types.UID
	// seeds are the launcher Pods whose capabilities seed is copied or being copied.
	seeds map[types.UID]*seedState
}

// listers are what the agent reads of the cluster.
type listers struct {
	vmis, targetVMIs vireolisters.VirtualMachineInstanceLister
	pods             corelisters.PodLister
	settings         *clusterconfig.Config
}

// New checks the options and builds the agent: its clients, informers and rooms. It changes
// nothing on the node or in the cluster until Run.
func New(o *Options) (*Agent, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig %q: %w", o.Kubeconfig, err)
	}
	cfg.UserAgent = "vireo-nodeagent/" + o.NodeName
	cfg = apiclient.PreferProtobuf(cfg)
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	vireo, err := versioned.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	onNode := func(field string) func(*metav1.ListOptions) {
		return func(lo *metav1.ListOptions) {
			lo.FieldSelector = fields.OneTermEqualSelector(field, o.NodeName).String()
		}
	}
	vf := vireoinformers.NewSharedInformerFactoryWithOptions(vireo, 10*time.Minute, vireoinformers.WithTweakListOptions(onNode("status.nodeName")))
	kf := kubeinformers.NewSharedInformerFactoryWithOptions(kube, 10*time.Minute, kubeinformers.WithTweakListOptions(func(lo *metav1.ListOptions) {
		onNode("spec.nodeName")(lo)
		lo.LabelSelector = v1.AppLabel + " in (" + v1.LauncherApp + "," + v1.UploadApp + "," + v1.CloneSourceApp + ")"
	}))
	sf := vireoinformers.NewSharedInformerFactoryWithOptions(vireo, 10*time.Minute, vireoinformers.WithNamespace(v1.InstallNamespace))
	tf := vireoinformers.NewSharedInformerFactoryWithOptions(vireo, 10*time.Minute, vireoinformers.WithTweakListOptions(func(lo *metav1.ListOptions) {
		lo.LabelSelector = v1.MigrationTargetNodeNameLabel + "=" + o.NodeName
	}))
	settings, err := clusterconfig.New(sf.Kubevirt().V1().KubeVirts())
	if err != nil {
		return nil, err
	}
	peers, err := migration.LoadPeerTLS(o.TLSCertFile, o.TLSKeyFile, o.ClientCAFile)
	if err != nil {
		klog.ErrorS(err, "No migrations between nodes from or to this node")
	}
	vmiInformer, targetInformer := vf.Kubevirt().V1().VirtualMachineInstances(), tf.Kubevirt().V1().VirtualMachineInstances()
	podInformer := kf.Core().V1().Pods()
	a := assemble(o, vireo, kube, listers{vmis: vmiInformer.Lister(), targetVMIs: targetInformer.Lister(), pods: podInformer.Lister(), settings: settings},
		peers, vmiInformer.Informer().HasSynced, podInformer.Informer().HasSynced, settings.HasSynced, targetInformer.Informer().HasSynced)
	a.informers = []interface{ Start(<-chan struct{}) }{vf, kf, sf, tf}
	if err := a.addHandlers(vmiInformer.Informer(), targetInformer.Informer(), podInformer.Informer()); err != nil {
		return nil, err
	}
	return a, nil
}

// check refuses options the agent cannot run with.
func (o *Options) check() error {
	switch {
	case o.NodeName == "":
		return errors.New("--node-name is required: the node this agent serves")
	case o.StreamPing <= 0:
		return fmt.Errorf("--stream-ping %s: must be positive", o.StreamPing)
	case o.MigrationDrainTimeout < 0:
		return fmt.Errorf("--migration-drain-timeout %s: must not be negative", o.MigrationDrainTimeout)
	case o.KubeletPodsDir == "":
		return errors.New("--kubelet-pods-dir is required: where the agent finds the Pods' emptyDirs")
	case o.TLSCertFile == "" || o.TLSKeyFile == "" || o.ClientCAFile == "":
		return errors.New("--tls-cert-file, --tls-private-key-file and --client-ca-file are required: the node agent serves only vireo-apiserver, over mutual TLS")
	}
	return nil
}

// assemble builds the agent and its rooms over l; its queues wait for synced.
func assemble(o *Options, client versioned.Interface, kube kubernetes.Interface, l listers, peers *migration.PeerTLS, synced ...cache.InformerSynced) *Agent {
	a := &Agent{opts: o, client: client, kube: kube, vmis: l.vmis, targetVMIs: l.targetVMIs, podList: l.pods, settings: l.settings,
		peers: peers, synced: synced, now: metav1.Now, dirs: nodedirs.Dirs{Root: o.RunDir, Pods: o.KubeletPodsDir},
		podUIDs: map[string]types.UID{}, seeds: map[types.UID]*seedState{}}
	a.network = PodNetwork{Dirs: a.dirs, HelperDir: o.NetworkHelperDir}
	a.Loop = reconcile.NewLoop("nodeagent", a.sync, synced...)
	a.pods = reconcile.NewLoop("nodeagent-pods", a.syncPod, synced...)
	a.sessions = launchersession.NewRegistry(a.dirs, func(vmiKey string, prev, st *protocol.DomainStatus) {
		migration.ObserveArrival(prev, st)
		a.EnqueueKey(vmiKey)
	})
	a.streams = streams.New(o.StreamPing, a.dirs, launcherFinder{a})
	a.migrations = migration.NewManager(migration.Config{
		Node: o.NodeName, Address: migration.Address(o.MigrationAddress, o.Listen, o.NodeName),
		Pods: l.pods, Dirs: a.dirs, Peers: peers, Settings: l.settings, Sessions: a.sessions, Queue: a.Loop,
		Now: func() metav1.Time { return a.now() }, SetUpNetwork: a.network.SetUp,
	})
	a.uploads = uploadrelay.New(l.pods, a.dirs)
	return a
}

// addHandlers queues what the informers report: VMIs into the VMI queue, Pods into the Pod
// queue and, for a launcher Pod, its VMI into the VMI queue.
func (a *Agent) addHandlers(vmis, targetVMIs, pods cache.SharedIndexInformer) error {
	enqueue := func(l *reconcile.Loop) cache.ResourceEventHandlerFuncs {
		return cache.ResourceEventHandlerFuncs{AddFunc: l.Enqueue, UpdateFunc: func(_, obj any) { l.Enqueue(obj) }, DeleteFunc: l.Enqueue}
	}
	for _, h := range []struct {
		inf     cache.SharedIndexInformer
		handler cache.ResourceEventHandlerFuncs
	}{
		{vmis, enqueue(a.Loop)}, {targetVMIs, enqueue(a.Loop)}, {pods, enqueue(a.pods)}, {pods, a.OwnerHandlers("VirtualMachineInstance")},
	} {
		if _, err := h.inf.AddEventHandler(h.handler); err != nil {
			return err
		}
	}
	return nil
}

// Run drives the agent until stop ends and the migrations it carries have ended (at most
// --migration-drain-timeout later): it prepares its directory, starts the informers, and once
// their caches are full, its HTTPS server, device plugin, metrics and queues. On the way out
// it ends every stream, session, migration proxy and clone relay.
func (a *Agent) Run(stop context.Context) error {
	ctx, cancel := context.WithCancel(context.WithoutCancel(stop))
	defer cancel()
	go func() {
		select {
		case <-stop.Done():
		case <-ctx.Done():
			return
		}
		drain, done := context.WithTimeout(ctx, a.opts.MigrationDrainTimeout)
		a.migrations.Drain(drain, time.Second)
		done()
		cancel()
	}()
	if err := a.dirs.EnsureBase(); err != nil {
		return fmt.Errorf("preparing the run directory: %w", err)
	}
	seedCapabilities(a.opts)
	for _, inf := range a.informers {
		inf.Start(ctx.Done())
	}
	if !cache.WaitForCacheSync(ctx.Done(), a.synced...) {
		return ctx.Err()
	}
	defer a.closeAll()
	a.forgetGone(ctx)
	srv, err := newServer(a.opts, a.peers, func(mux *http.ServeMux) {
		a.streams.Register(mux)
		a.registerActions(mux)
		a.uploads.Register(mux)
		a.migrations.Register(mux)
	})
	if err != nil {
		return err
	}
	errc := make(chan error, 6)
	go func() { errc <- deviceplugin.ServeKVM(ctx, a.opts.DevicePluginDir) }()
	go func() { errc <- deviceplugin.ServeTun(ctx, a.opts.DevicePluginDir) }()
	go func() { errc <- a.serveMetrics(ctx) }()
	go func() { errc <- srv.run(ctx) }()
	go func() { errc <- a.Loop.Run(ctx, a.opts.Workers) }()
	go func() { errc <- a.pods.Run(ctx, 2) }()
	klog.InfoS("vireo-nodeagent running", "node", a.opts.NodeName, "runDir", a.opts.RunDir)
	return <-errc
}

// closeAll ends what the agent keeps open; the guests run on.
func (a *Agent) closeAll() {
	a.streams.CloseAll()
	a.sessions.StopAll()
	a.migrations.EndAll()
	a.uploads.CloseAll()
}

// serveMetrics serves /metrics until ctx ends (not at all with --metrics-port 0).
func (a *Agent) serveMetrics(ctx context.Context) error {
	if a.opts.MetricsPort == 0 {
		<-ctx.Done()
		return ctx.Err()
	}
	migration.RegisterMetrics()
	m := metricsserver.NewOptions("vireo-nodeagent")
	m.Serving.BindPort = a.opts.MetricsPort
	if err := m.Serve(ctx, a.opts.Kubeconfig); err != nil {
		// Metrics are no reason to stop driving guests.
		klog.ErrorS(err, "No /metrics")
	}
	<-ctx.Done()
	return ctx.Err()
}

// seedCapabilities offers launchers the capabilities the init container probed. Without a
// seed each launcher's libvirtd probes QEMU itself: slower, not wrong, so failures are logged.
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
