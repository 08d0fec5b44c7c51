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
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/controllers/launcherpod"
	"github.com/vireo-dev/vireo/controllers/metrics"
	"github.com/vireo-dev/vireo/controllers/migration"
	"github.com/vireo-dev/vireo/controllers/vm"
	"github.com/vireo-dev/vireo/controllers/vmi"
	"github.com/vireo-dev/vireo/generated/clientset/versioned"
	vireoinformers "github.com/vireo-dev/vireo/generated/informers/externalversions"
	"github.com/vireo-dev/vireo/launcher/protocol/capsseed"
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
	Metrics *metrics.Options
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{LeaderElect: true, LeaseNamespace: v1.InstallNamespace, Workers: 10, Launcher: launcherpod.Options{
		Image:           "ghcr.io/vireo-dev/vireo-launcher:latest",
		RunDir:          "/var/run/vireo",
		ImageCacheDir:   "/var/lib/vireo/images",
		CapabilitiesDir: capsseed.DefaultDir,
		MemoryOverhead:  launcherpod.DefaultMemoryOverhead.DeepCopy(),
	}, Metrics: metrics.NewOptions()}
}

// AddFlags registers the options.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Kubeconfig to reach the cluster; empty means in-cluster.")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "Elect one active replica through a Lease.")
	fs.StringVar(&o.LeaseNamespace, "lease-namespace", o.LeaseNamespace, "Namespace of the leader-election Lease.")
	// KubeVirt runs 10 VMI workers (1 VMI/s with 3 was too slow at scale).
	fs.IntVar(&o.Workers, "workers", o.Workers, "Concurrent VMI reconciles.")
	fs.StringVar(&o.Launcher.Image, "launcher-image", o.Launcher.Image, "Image of the launcher Pods (vireo-launcher).")
	fs.StringVar(&o.Launcher.RunDir, "node-run-dir", o.Launcher.RunDir, "The nodes' run directory shared by the node agent and the launcher Pods (hostPath); must match vireo-nodeagent's.")
	fs.StringVar(&o.Launcher.ImageCacheDir, "node-image-cache-dir", o.Launcher.ImageCacheDir, "The nodes' containerDisk cache (hostPath, mounted read-only in launcher Pods); must match vireo-nodeagent's.")
	fs.StringVar(&o.Launcher.CapabilitiesDir, "node-capabilities-dir", o.Launcher.CapabilitiesDir, "The nodes' QEMU capabilities seed (hostPath, mounted read-only in launcher Pods); must match vireo-nodeagent's --capabilities-dir.")
	fs.Var(quantityFlag{&o.Launcher.MemoryOverhead}, "launcher-memory-overhead", "Memory a launcher Pod requests on top of the guest's (launcher, libvirtd, QEMU).")
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

func runControllers(ctx context.Context, cfg *rest.Config, o *Options) error {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	vireo, err := versioned.NewForConfig(cfg)
	if err != nil {
		return err
	}
	vf := vireoinformers.NewSharedInformerFactory(vireo, 10*time.Minute)
	kf := kubeinformers.NewSharedInformerFactoryWithOptions(kube, 10*time.Minute,
		kubeinformers.WithTweakListOptions(func(lo *metav1.ListOptions) {
			lo.LabelSelector = v1.AppLabel + "=" + v1.LauncherApp
		}))
	vmiController, err := vmi.New(vireo, kube, vf.Kubevirt().V1().VirtualMachineInstances(), kf.Core().V1().Pods(), o.Launcher)
	if err != nil {
		return err
	}
	migrationController, err := migration.New(vireo, vf.Kubevirt().V1().VirtualMachineInstanceMigrations())
	if err != nil {
		return err
	}
	vmController, err := vm.New(vireo, vf.Kubevirt().V1().VirtualMachines(), vf.Kubevirt().V1().VirtualMachineInstances())
	if err != nil {
		return err
	}
	vmiInformer := vf.Kubevirt().V1().VirtualMachineInstances()
	if _, err := vmiInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: metrics.ObservePhaseTransition}); err != nil {
		return err
	}
	metrics.Register(vf.Kubevirt().V1().VirtualMachines().Lister(), vmiInformer.Lister())
	vf.Start(ctx.Done())
	kf.Start(ctx.Done())
	klog.InfoS("vireo-controller running", "workers", o.Workers)
	// The controllers run until ctx ends; when one stops early, all stop.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	runners := []interface {
		Run(context.Context, int) error
	}{vmiController, migrationController, vmController}
	errc := make(chan error, len(runners))
	for _, r := range runners {
		go func() {
			err := r.Run(ctx, o.Workers)
			cancel()
			errc <- err
		}()
	}
	var errs []error
	for range runners {
		errs = append(errs, <-errc)
	}
	return errors.Join(errs...)
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
	id = fmt.Sprintf("%s_%d", id, os.Getpid())
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, o.LeaseNamespace, "vireo-controller",
		kube.CoreV1(), kube.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: id})
	if err != nil {
		return err
	}
	errc := make(chan error, 1)
	leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   15 * time.Second,
		RenewDeadline:   10 * time.Second,
		RetryPeriod:     2 * time.Second,
		ReleaseOnCancel: true,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) { errc <- runControllers(ctx, cfg, o) },
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
