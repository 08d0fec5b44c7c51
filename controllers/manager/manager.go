// Package manager runs vireo-controller: it connects to the cluster, elects a leader
// among replicas and runs the reconcilers on shared informers.
package manager

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/controllers/datavolume"
	"github.com/vireo-dev/vireo/controllers/evacuation"
	"github.com/vireo-dev/vireo/controllers/imagedigest"
	"github.com/vireo-dev/vireo/controllers/launcherpod"
	"github.com/vireo-dev/vireo/controllers/metrics"
	"github.com/vireo-dev/vireo/controllers/migration"
	"github.com/vireo-dev/vireo/controllers/pool"
	"github.com/vireo-dev/vireo/controllers/replicaset"
	"github.com/vireo-dev/vireo/controllers/vm"
	"github.com/vireo-dev/vireo/controllers/vmi"
	"github.com/vireo-dev/vireo/controllers/workloadupdate"
	"github.com/vireo-dev/vireo/generated/clientset/versioned"
	vireoinformers "github.com/vireo-dev/vireo/generated/informers/externalversions"
	"github.com/vireo-dev/vireo/internal/apiclient"
	"github.com/vireo-dev/vireo/internal/clusterconfig"
	"github.com/vireo-dev/vireo/internal/metricsserver"
)

// Options are vireo-controller's command-line options.
type Options struct {
	Kubeconfig     string
	LeaderElect    bool
	LeaseNamespace string
	Workers        int
	// Launcher configures the launcher Pods: image, node directories, memory overhead.
	Launcher launcherpod.Options
	// Metrics says where /metrics is served and who may read it.
	Metrics *metricsserver.Options
	// Importer configures the DataVolumes' importer Pods.
	Importer datavolume.ImporterOptions
	// NodeAgentDaemonSet names the node agents' DaemonSet in vireo-system: automated workload
	// updates wait until it has rolled out.
	NodeAgentDaemonSet string
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{LeaderElect: true, LeaseNamespace: v1.InstallNamespace, Workers: 10, NodeAgentDaemonSet: "vireo-nodeagent", Launcher: launcherpod.Options{
		Image:          "ghcr.io/vireo-dev/vireo-launcher:latest",
		MemoryOverhead: launcherpod.DefaultMemoryOverhead.DeepCopy(),
	}, Metrics: metricsserver.NewOptions("vireo-controller"), Importer: datavolume.ImporterOptions{
		Image: "ghcr.io/vireo-dev/vireo-importer:latest", FilesystemOverhead: datavolume.DefaultFilesystemOverhead,
	}}
}

// AddFlags registers the options.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Kubeconfig to reach the cluster; empty means in-cluster.")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "Elect one active replica through a Lease.")
	fs.StringVar(&o.LeaseNamespace, "lease-namespace", o.LeaseNamespace, "Namespace of the leader-election Lease.")
	// KubeVirt runs 10 VMI workers (1 VMI/s with 3 was too slow at scale).
	fs.IntVar(&o.Workers, "workers", o.Workers, "Concurrent VMI reconciles.")
	fs.StringVar(&o.Launcher.Image, "launcher-image", o.Launcher.Image, "Image of the launcher Pods (vireo-launcher).")
	fs.Var(quantityFlag{&o.Launcher.MemoryOverhead}, "launcher-memory-overhead", "Memory a launcher Pod requests on top of the guest's (launcher, libvirtd, QEMU).")
	fs.StringVar(&o.Importer.Image, "importer-image", o.Importer.Image, "Image of the DataVolumes' importer Pods (vireo-importer).")
	fs.StringArrayVar(&o.Importer.InsecureRegistries, "insecure-registry", o.Importer.InsecureRegistries, "A registry (host[:port]) reached over plain HTTP: by importer Pods for registry DataVolume sources, and by the controller when it pins a VMI's image tags to digests; repeatable.")
	fs.Float64Var(&o.Importer.FilesystemOverhead, "filesystem-overhead", o.Importer.FilesystemOverhead, "Share of a Filesystem volume its file system takes; a DataVolume's disk image gets the rest (CDI's default 0.055).")
	fs.StringVar(&o.NodeAgentDaemonSet, "node-agent-daemonset", o.NodeAgentDaemonSet, "The node agents' DaemonSet in "+v1.InstallNamespace+": automated workload updates (spec.workloadUpdateStrategy) wait until it has rolled out; empty: do not wait.")
	o.Metrics.AddFlags(fs)
}

// Run connects and reconciles until ctx ends.
func Run(ctx context.Context, o *Options) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	if err != nil {
		return fmt.Errorf("loading kubeconfig %q: %w", o.Kubeconfig, err)
	}
	// KubeVirt's controller uses 200 QPS / 400 burst; client-go's 5/10 serialises large clusters.
	cfg.QPS, cfg.Burst = 200, 400
	cfg.UserAgent = "vireo-controller"
	// Every replica serves /metrics; only the leader's controllers fill the VM and VMI metrics.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	metricsErr := make(chan error, 1)
	go func() {
		err := o.Metrics.Serve(ctx, o.Kubeconfig)
		if err != nil {
			cancel()
		}
		metricsErr <- err
	}()
	if !o.LeaderElect {
		err = runControllers(ctx, cfg, o)
	} else {
		err = runElected(ctx, cfg, o)
	}
	cancel()
	return errors.Join(err, <-metricsErr)
}

// runControllers builds the controllers and runs them until ctx ends.
func runControllers(ctx context.Context, cfg *rest.Config, o *Options) error {
	set, err := newControllerSet(ctx, cfg, o)
	if err != nil {
		return err
	}
	return set.run(ctx, o.Workers)
}

// controllerSet is vireo-controller's reconcilers with their informers started: a standby
// replica builds it before it is elected, so that its caches are warm when it takes over.
// Only run acts (writes, counts metrics).
type controllerSet struct {
	vireo    versioned.Interface
	vf       vireoinformers.SharedInformerFactory
	settings *clusterconfig.Config
	runners  []interface {
		Run(context.Context, int) error
	}
}

// newControllerSet builds the controllers and starts their informers until ctx ends; it
// returns once the settings are read.
func newControllerSet(ctx context.Context, cfg *rest.Config, o *Options) (*controllerSet, error) {
	cfg = apiclient.PreferProtobuf(cfg)
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	vireo, err := versioned.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	vf := vireoinformers.NewSharedInformerFactory(vireo, 10*time.Minute)
	kf := kubeinformers.NewSharedInformerFactoryWithOptions(kube, 10*time.Minute,
		kubeinformers.WithTweakListOptions(func(lo *metav1.ListOptions) {
			lo.LabelSelector = v1.AppLabel + "=" + v1.LauncherApp
		}))
	settings, err := startSettings(ctx, vireo)
	if err != nil {
		return nil, err
	}
	launcher := o.Launcher
	launcher.Emulation = settings.Emulation
	failedMounts := kubeinformers.NewSharedInformerFactoryWithOptions(kube, 10*time.Minute,
		kubeinformers.WithTweakListOptions(func(lo *metav1.ListOptions) { lo.FieldSelector = vmi.FailedMountSelector }))
	vmiController, err := vmi.New(vireo, kube, vf.Kubevirt().V1().VirtualMachineInstances(), kf.Core().V1().Pods(), vf.Cdi().V1beta1().DataVolumes(),
		failedMounts.Core().V1().Events(), launcher, &imagedigest.Resolver{Insecure: o.Importer.InsecureRegistries})
	if err != nil {
		return nil, err
	}
	// Migration policies select namespaces by their labels.
	namespaces := kubeinformers.NewSharedInformerFactory(kube, 10*time.Minute)
	policies := migration.NewPolicies(vf.Migrations().V1alpha1().MigrationPolicies(), namespaces.Core().V1().Namespaces())
	migrations, err := migration.New(vireo, kube, vf.Kubevirt().V1().VirtualMachineInstanceMigrations(),
		vf.Kubevirt().V1().VirtualMachineInstances(), kf.Core().V1().Pods(), settings, policies, launcher)
	if err != nil {
		return nil, err
	}
	migrationController := &withInformers{controller: migrations, factories: []interface{ Start(<-chan struct{}) }{namespaces}}
	vmController, err := vm.New(vireo, kube, vf.Kubevirt().V1().VirtualMachines(), vf.Kubevirt().V1().VirtualMachineInstances(), vf.Cdi().V1beta1().DataVolumes())
	if err != nil {
		return nil, err
	}
	replicaSetController, err := replicaset.New(vireo, vf.Kubevirt().V1().VirtualMachineInstanceReplicaSets(), vf.Kubevirt().V1().VirtualMachineInstances())
	if err != nil {
		return nil, err
	}
	poolController, err := pool.New(vireo, vf.Pool().V1beta1().VirtualMachinePools(), vf.Kubevirt().V1().VirtualMachines(),
		vf.Kubevirt().V1().VirtualMachineInstances())
	if err != nil {
		return nil, err
	}
	dvController, err := newDataVolumeController(kube, vireo, vf, o.Importer)
	if err != nil {
		return nil, err
	}
	evacuationController, err := newEvacuationController(kube, vireo, vf)
	if err != nil {
		return nil, err
	}
	updates, err := workloadupdate.New(vireo, kube, vf.Kubevirt().V1().VirtualMachineInstances(), vf.Kubevirt().V1().VirtualMachineInstanceMigrations(),
		kf.Core().V1().Pods(), settings, workloadupdate.Options{LauncherImage: o.Launcher.Image, NodeAgentDaemonSet: o.NodeAgentDaemonSet})
	if err != nil {
		return nil, err
	}
	// The metrics' listers and handlers are added by run: a standby counts nothing.
	vf.Start(ctx.Done())
	kf.Start(ctx.Done())
	failedMounts.Start(ctx.Done())
	for _, w := range []*withInformers{migrationController, dvController, evacuationController} {
		w.startInformers(ctx.Done())
	}
	return &controllerSet{vireo: vireo, vf: vf, settings: settings, runners: []interface {
		Run(context.Context, int) error
	}{vmiController, migrationController, vmController, replicaSetController, poolController, dvController, evacuationController, updates}}, nil
}

// run runs every controller with workers until ctx ends or one stops, which stops all.
func (s *controllerSet) run(ctx context.Context, workers int) error {
	go s.settings.Acknowledge(ctx, s.vireo)
	vmiInformer := s.vf.Kubevirt().V1().VirtualMachineInstances()
	if _, err := vmiInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: metrics.ObservePhaseTransition}); err != nil {
		return err
	}
	metrics.Register(s.vf.Kubevirt().V1().VirtualMachines().Lister(), vmiInformer.Lister())
	migrationInformer := s.vf.Kubevirt().V1().VirtualMachineInstanceMigrations()
	if _, err := migrationInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: metrics.ObserveMigrationPhaseTransition}); err != nil {
		return err
	}
	metrics.RegisterMigrations(migrationInformer.Lister())
	klog.InfoS("vireo-controller running", "workers", workers)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, len(s.runners))
	for _, r := range s.runners {
		go func() {
			err := r.Run(ctx, workers)
			cancel()
			errc <- err
		}()
	}
	var errs []error
	for range s.runners {
		errs = append(errs, <-errc)
	}
	return errors.Join(errs...)
}

// startSettings starts the informer of the installation's KubeVirt object (vireo-system only)
// and waits until it has listed it, so that no launcher Pod is rendered with settings not yet
// read. The leader records the generation taken up in the object's status (Acknowledge).
func startSettings(ctx context.Context, vireo versioned.Interface) (*clusterconfig.Config, error) {
	f := vireoinformers.NewSharedInformerFactoryWithOptions(vireo, 10*time.Minute, vireoinformers.WithNamespace(v1.InstallNamespace))
	settings, err := clusterconfig.New(f.Kubevirt().V1().KubeVirts())
	if err != nil {
		return nil, err
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), settings.HasSynced) {
		return nil, fmt.Errorf("listing the KubeVirt settings objects of %s: %w", v1.InstallNamespace, ctx.Err())
	}
	settings.Get() // logs where the settings come from
	return settings, nil
}

// newDataVolumeController wires the DataVolume controller with informers of its own claims and
// importer Pods (filtered by label) and of StorageClasses; it starts them with ctx.
func newDataVolumeController(kube kubernetes.Interface, vireo versioned.Interface, vf vireoinformers.SharedInformerFactory, o datavolume.ImporterOptions) (*withInformers, error) {
	claims := kubeinformers.NewSharedInformerFactoryWithOptions(kube, 10*time.Minute, kubeinformers.WithTweakListOptions(func(lo *metav1.ListOptions) {
		lo.LabelSelector = datavolume.ManagedByLabel + "=" + datavolume.ManagedBy
	}))
	pods := kubeinformers.NewSharedInformerFactoryWithOptions(kube, 10*time.Minute, kubeinformers.WithTweakListOptions(func(lo *metav1.ListOptions) {
		lo.LabelSelector = "app=" + datavolume.ImporterApp
	}))
	classes := kubeinformers.NewSharedInformerFactory(kube, 10*time.Minute)
	c, err := datavolume.New(vireo, kube, vf.Cdi().V1beta1().DataVolumes(), claims.Core().V1().PersistentVolumeClaims(),
		pods.Core().V1().Pods(), classes.Storage().V1().StorageClasses(), o)
	if err != nil {
		return nil, err
	}
	return &withInformers{controller: c, factories: []interface{ Start(<-chan struct{}) }{claims, pods, classes}}, nil
}

// newEvacuationController wires the evacuation controller with informers of Nodes and of the
// PodDisruptionBudgets it creates (filtered by their kubevirt.io/created-by label); it starts
// them with ctx.
func newEvacuationController(kube kubernetes.Interface, vireo versioned.Interface, vf vireoinformers.SharedInformerFactory) (*withInformers, error) {
	nodes := kubeinformers.NewSharedInformerFactory(kube, 10*time.Minute)
	budgets := kubeinformers.NewSharedInformerFactoryWithOptions(kube, 10*time.Minute, kubeinformers.WithTweakListOptions(func(lo *metav1.ListOptions) {
		lo.LabelSelector = v1.CreatedByLabel
	}))
	c, err := evacuation.New(vireo, kube, vf.Kubevirt().V1().VirtualMachineInstances(), vf.Kubevirt().V1().VirtualMachineInstanceMigrations(),
		nodes.Core().V1().Nodes(), budgets.Policy().V1().PodDisruptionBudgets())
	if err != nil {
		return nil, err
	}
	return &withInformers{controller: c, factories: []interface{ Start(<-chan struct{}) }{nodes, budgets}}, nil
}

// withInformers starts a controller's own informer factories with it.
type withInformers struct {
	controller interface {
		Run(context.Context, int) error
	}
	factories []interface{ Start(<-chan struct{}) }
}

// startInformers starts the controller's own informer factories until stop closes.
func (r *withInformers) startInformers(stop <-chan struct{}) {
	for _, f := range r.factories {
		f.Start(stop)
	}
}

// Run starts the factories (unless they run), then runs the controller with workers until
// ctx ends.
func (r *withInformers) Run(ctx context.Context, workers int) error {
	r.startInformers(ctx.Done())
	return r.controller.Run(ctx, workers)
}

func runElected(ctx context.Context, cfg *rest.Config, o *Options) error {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	id, err := os.Hostname()
	if err != nil {
		return err
	}
	// Unique per process, as kube-controller-manager's: in a container every process is pid 1,
	// so a leader restarted in its Pod would otherwise carry its predecessor's identity and
	// renew a Lease it never acquired.
	id = id + "_" + string(uuid.NewUUID())
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, o.LeaseNamespace, "vireo-controller",
		kube.CoreV1(), kube.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: id})
	if err != nil {
		return err
	}
	// Warm: a standby lists and watches as the leader does, so it acts at once when elected.
	set, err := newControllerSet(ctx, cfg, o)
	if err != nil {
		return err
	}
	errc := make(chan error, 1)
	// A leader that dies without releasing the Lease is replaced once it expires: at most
	// LeaseDuration plus two of the candidates' polls (RetryPeriod, jittered up to 2.2 times)
	// after its last renewal, 12.4 s.
	leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   8 * time.Second,
		RenewDeadline:   5 * time.Second,
		RetryPeriod:     time.Second,
		ReleaseOnCancel: true,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) { errc <- set.run(ctx, o.Workers) },
			OnStoppedLeading: func() { klog.InfoS("Lost leadership", "identity", id) },
		},
	})
	select {
	case err := <-errc:
		return err
	default:
		return ctx.Err()
	}
}

// quantityFlag is a resource.Quantity as a command-line flag.
type quantityFlag struct{ q *resource.Quantity }

func (f quantityFlag) String() string {
	if f.q == nil {
		return ""
	}
	return f.q.String()
}

func (f quantityFlag) Set(s string) error {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return fmt.Errorf("%q is not a quantity such as 160Mi: %w", s, err)
	}
	*f.q = q
	return nil
}

func (quantityFlag) Type() string { return "quantity" }
