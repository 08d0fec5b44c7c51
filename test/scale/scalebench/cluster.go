package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/generated/clientset/versioned"
	"github.com/vireo-dev/vireo/localcluster"
	"github.com/vireo-dev/vireo/test/bench/crdbaseline"
	"github.com/vireo-dev/vireo/test/bench/webhook"
	"github.com/vireo-dev/vireo/test/scale/simkubelet"
)

// maxNodes is how many nodes the Pod network (a /12 cut into /24s) has room for.
const maxNodes = 4096

// simPrefix names the simulated nodes (sim-0000, sim-0001, ...).
const simPrefix = "sim"

// clusterOptions are an installation apart from `make up`'s, the e2e suite's and the
// benchmarks' (own root, network namespace, subnet and ports), so that they can run at once.
// kube-scheduler and kube-controller-manager get a client QPS that does not cap the binding of
// launcher Pods below the creation rate measured.
func clusterOptions(c config) localcluster.Options {
	opts := localcluster.DefaultOptions(os.Stderr)
	opts.Root, opts.BinDir, opts.ManifestsDir = c.root, c.bin, c.manifests
	opts.Nodes = 1
	opts.Network = localcluster.Network{Netns: "vireo-scale", HostIP: net.IPv4(10, 253, 0, 1), PrefixLen: 24, ClusterCIDR: "10.112.0.0/12"}
	opts.Ports = localcluster.Ports{EtcdClient: 23379, EtcdPeer: 23380, KubeAPIServer: 27443, ControllerManager: 31257, Scheduler: 31259}
	if c.smoke {
		// make test's smoke run, apart from a `make scale` that may run meanwhile.
		opts.Network = localcluster.Network{Netns: "vireo-smoke", HostIP: net.IPv4(10, 254, 0, 1), PrefixLen: 24, ClusterCIDR: "10.128.0.0/12"}
		opts.Ports = localcluster.Ports{EtcdClient: 23479, EtcdPeer: 23480, KubeAPIServer: 27543, ControllerManager: 31357, Scheduler: 31359}
	}
	opts.ControlPlaneQPS = 500
	return opts
}

// clients reach the installation as its admin, with no client-side rate limit.
type clients struct {
	cfg   *rest.Config
	kube  kubernetes.Interface
	vireo versioned.Interface
	dyn   dynamic.Interface
}

func newClients(cluster *localcluster.Cluster) (*clients, error) {
	cfg, err := cluster.RESTConfig()
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = -1, 0
	// The CRD baseline's objects carry KubeVirt's finalizer, which kube-apiserver warns about
	// on every write: each warning once, not 100,000 times.
	cfg.WarningHandler = rest.NewWarningWriter(os.Stderr, rest.WarningWriterOptions{Deduplicate: true})
	cl := &clients{cfg: cfg}
	if cl.kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, err
	}
	if cl.vireo, err = versioned.NewForConfig(cfg); err != nil {
		return nil, err
	}
	if cl.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return nil, err
	}
	return cl, nil
}

// withInstallation starts the harness's installation, runs fn with it and removes it again,
// even when fn fails.
func withInstallation(ctx context.Context, c config, fn func(*localcluster.Cluster, *clients) error) (err error) {
	for _, p := range []*string{&c.out, &c.root, &c.bin, &c.manifests} {
		if *p, err = filepath.Abs(*p); err != nil {
			return err
		}
	}
	for _, bin := range []string{"kube-apiserver", "kube-scheduler", "etcd", "vireo-apiserver", "vireo-controller"} {
		if _, err := os.Stat(filepath.Join(c.bin, bin)); err != nil {
			return fmt.Errorf("%s not built: run `make build upstream oci`", bin)
		}
	}
	cluster := localcluster.New(clusterOptions(c))
	_ = cluster.Down(true) // the leftovers of an interrupted run
	defer func() {
		if derr := cluster.Down(true); derr != nil {
			err = errors.Join(err, fmt.Errorf("removing the harness's installation: %w", derr))
		}
	}()
	say("starting the installation in %s", c.root)
	if err := cluster.Up(ctx); err != nil {
		return err
	}
	cl, err := newClients(cluster)
	if err != nil {
		return err
	}
	return fn(cluster, cl)
}

// namespaceName is the i-th namespace the VMIs are spread over.
func namespaceName(i int) string { return fmt.Sprintf("scale-%d", i) }

func createNamespaces(ctx context.Context, kube kubernetes.Interface, n int) error {
	for i := range n {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespaceName(i)}}
		if _, err := kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

// simulatedNodes registers the simulated nodes, runs their kubelets in the background and
// waits until every one is Ready with a Pod CIDR, as kube-scheduler needs them.
func simulatedNodes(ctx context.Context, kube kubernetes.Interface, c config) ([]string, error) {
	perNode := (c.vmis+c.nodes-1)/c.nodes*2 + 10
	k := simkubelet.New(kube, simkubelet.Options{Nodes: c.nodes, Prefix: simPrefix, Pods: perNode, Workers: 16})
	say("registering %d simulated nodes (%d Pods each)", c.nodes, perNode)
	if err := k.Register(ctx); err != nil {
		return nil, err
	}
	go func() {
		if err := k.Run(ctx); err != nil && ctx.Err() == nil {
			say("the simulated kubelets stopped: %v", err)
		}
	}()
	names := make([]string, c.nodes)
	for i := range names {
		names[i] = simkubelet.NodeName(simPrefix, i)
	}
	var ready int
	err := wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		nodes, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: simkubelet.Label + "=true"})
		if err != nil {
			return false, nil
		}
		ready = 0
		for _, n := range nodes.Items {
			if n.Spec.PodCIDR != "" && nodeReady(&n) && len(n.Spec.Taints) == 1 {
				ready++
			}
		}
		return ready == c.nodes, nil
	})
	if err != nil {
		return nil, fmt.Errorf("%d of %d simulated nodes Ready with a Pod CIDR and only their own taint after 5m: %w", ready, c.nodes, err)
	}
	return names, nil
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// componentClient is KubeVirt's controller of the CRD baseline: the identity its webhooks let
// write status and the components' labels, allowed by RBAC to patch the CRD's VMIs.
func componentClient(ctx context.Context, cluster *localcluster.Cluster, cl *clients) (dynamic.Interface, error) {
	name := "scalebench-kubevirt-controller"
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{crdbaseline.Group}, Resources: []string{"virtualmachineinstances"}, Verbs: []string{"get", "list", "watch", "patch", "update"}}}}
	if _, err := cl.kube.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: webhook.ComponentUser}}}
	if _, err := cl.kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	cfg, err := cluster.UserConfig(webhook.ComponentUser, nil)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = -1, 0
	cfg.WarningHandler = cl.cfg.WarningHandler
	return dynamic.NewForConfig(cfg)
}

// setControllerWorkers restarts vireo-controller with n workers per reconcile loop (its
// --workers) and waits until the new Pod is the only one and available.
func setControllerWorkers(ctx context.Context, kube kubernetes.Interface, n int) error {
	deployments := kube.AppsV1().Deployments(v1.InstallNamespace)
	d, err := deployments.Get(ctx, "vireo-controller", metav1.GetOptions{})
	if err != nil {
		return err
	}
	found := false
	for i := range d.Spec.Template.Spec.Containers {
		c := &d.Spec.Template.Spec.Containers[i]
		if c.Name == "vireo-controller" {
			c.Args, found = append(c.Args, fmt.Sprintf("--workers=%d", n)), true
		}
	}
	if !found {
		return fmt.Errorf("deployment vireo-controller has no container vireo-controller")
	}
	if d, err = deployments.Update(ctx, d, metav1.UpdateOptions{}); err != nil {
		return err
	}
	generation := d.Generation
	return wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		d, err := deployments.Get(ctx, "vireo-controller", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		want := *d.Spec.Replicas
		st := d.Status
		return st.ObservedGeneration >= generation && st.UpdatedReplicas == want && st.AvailableReplicas == want && st.Replicas == want, nil
	})
}
