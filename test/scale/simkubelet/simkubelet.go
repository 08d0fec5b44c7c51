// Package simkubelet stands in for the kubelets of many simulated nodes in the scale harness
// (issue "Scale"): it registers the Nodes, tainted so that only Pods that tolerate the taint
// land there, keeps their Leases fresh so that the node lifecycle controller leaves them Ready,
// reports the Pods bound to them running (every container running and ready, PodReady), and
// finishes their deletion as a kubelet does once the containers stopped. It runs no container:
// one process stands for a thousand nodes.
package simkubelet

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// Label marks the simulated Nodes (value "true"); Taint keeps every Pod that does not tolerate
// it off them.
const Label = "scale.vireo.dev/simulated"

// Taint is the taint of the simulated Nodes.
var Taint = corev1.Taint{Key: Label, Value: "true", Effect: corev1.TaintEffectNoSchedule}

// Toleration lets a Pod (a VMI's launcher Pod) onto the simulated Nodes.
var Toleration = corev1.Toleration{Key: Label, Operator: corev1.TolerationOpEqual, Value: "true", Effect: corev1.TaintEffectNoSchedule}

// leaseSeconds is the Leases' duration; they are renewed every quarter of it, as a kubelet does.
const leaseSeconds = 40

// Options say which nodes to simulate.
type Options struct {
	// Nodes is how many; they are named Prefix-0000, Prefix-0001, ...
	Nodes  int
	Prefix string
	// Pods is how many Pods each node takes (its allocatable pods).
	Pods int
	// Workers write Pod statuses and deletions concurrently.
	Workers int
}

// Kubelet simulates the kubelets of Options.Nodes nodes.
type Kubelet struct {
	kube  kubernetes.Interface
	opts  Options
	nodes map[string]int
	queue workqueue.TypedRateLimitingInterface[string]
	pods  cache.Indexer
	// started numbers the Pods the simulation ran (their addresses).
	started atomic.Int64
	// leases are the Leases as last written, by node.
	leaseMu sync.Mutex
	leases  map[string]*coordinationv1.Lease
}

// New returns the simulation; Register creates its Nodes, Run runs them.
func New(kube kubernetes.Interface, opts Options) *Kubelet {
	k := &Kubelet{kube: kube, opts: opts, nodes: map[string]int{}, leases: map[string]*coordinationv1.Lease{},
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())}
	for i := range opts.Nodes {
		k.nodes[NodeName(opts.Prefix, i)] = i
	}
	return k
}

// NodeName is the name of simulated node i.
func NodeName(prefix string, i int) string { return fmt.Sprintf("%s-%04d", prefix, i) }

// Register creates the Nodes (Ready, tainted, labelled) and their Leases; existing ones are
// kept.
func (k *Kubelet) Register(ctx context.Context) error {
	for name, i := range k.nodes {
		node := k.node(name, i)
		created, err := k.kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		switch {
		case apierrors.IsAlreadyExists(err):
			continue
		case err != nil:
			return fmt.Errorf("registering simulated node %s: %w", name, err)
		}
		// kube-controller-manager changes a new Node at once (its Pod CIDR, a not-ready taint).
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			created.Status = node.Status
			_, err := k.kube.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
			if apierrors.IsConflict(err) {
				if latest, gerr := k.kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{}); gerr == nil {
					created = latest
				}
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("reporting simulated node %s Ready: %w", name, err)
		}
	}
	return k.renewLeases(ctx)
}

// node renders simulated node i.
func (k *Kubelet) node(name string, i int) *corev1.Node {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("64"),
		corev1.ResourceMemory:           resource.MustParse("512Gi"),
		corev1.ResourcePods:             *resource.NewQuantity(int64(k.opts.Pods), resource.DecimalSI),
		"devices.kubevirt.io/kvm":       resource.MustParse("1000"),
		"devices.kubevirt.io/tun":       resource.MustParse("1000"),
		corev1.ResourceEphemeralStorage: resource.MustParse("1Ti"),
	}
	now := metav1.Now()
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{Label: "true", corev1.LabelHostname: name}},
		Spec:       corev1.NodeSpec{Taints: []corev1.Taint{Taint}},
		Status: corev1.NodeStatus{
			Capacity: capacity, Allocatable: capacity,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
				Message: "simulated", LastHeartbeatTime: now, LastTransitionTime: now}},
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: nodeAddress(i).String()}},
		},
	}
}

// nodeAddress is simulated node i's address, in 100.64.0.0/11 (of the shared address space
// 100.64.0.0/10, never routed here): nothing is ever sent to it.
func nodeAddress(i int) netip.Addr {
	return netip.AddrFrom4([4]byte{100, byte(64 + i>>16&0x1f), byte(i >> 8), byte(i)})
}

// podAddress is the address of the n-th Pod the simulation ran, in 100.96.0.0/11.
func podAddress(n int) netip.Addr {
	return netip.AddrFrom4([4]byte{100, byte(96 + n>>16&0x1f), byte(n >> 8), byte(n)})
}

// renewLeases creates or renews every node's Lease in kube-node-lease, Workers at a time (a
// kubelet renews its own: one after the other, a thousand renewals would take longer than a
// Lease lasts once kube-apiserver is busy, and the nodes would turn NotReady). Each renewal is
// one update of the Lease as last written; it is read again only after a conflict.
func (k *Kubelet) renewLeases(ctx context.Context) error {
	leases := k.kube.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	names := make(chan string)
	errs := make(chan error, len(k.nodes))
	var wg sync.WaitGroup
	for range max(k.opts.Workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range names {
				if err := k.renewLease(ctx, leases, name); err != nil {
					errs <- err
				}
			}
		}()
	}
	for name := range k.nodes {
		names <- name
	}
	close(names)
	wg.Wait()
	close(errs)
	return <-errs
}

// renewLease creates or renews the Lease of node name.
func (k *Kubelet) renewLease(ctx context.Context, leases coordinationclient.LeaseInterface, name string) error {
	now := metav1.NewMicroTime(time.Now())
	k.leaseMu.Lock()
	lease := k.leases[name]
	k.leaseMu.Unlock()
	var err error
	if lease == nil {
		if lease, err = leases.Get(ctx, name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			lease, err = leases.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(name), LeaseDurationSeconds: ptr.To(int32(leaseSeconds)), RenewTime: &now}},
				metav1.CreateOptions{})
		}
	} else {
		lease = lease.DeepCopy()
		lease.Spec.RenewTime = &now
		lease, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
	}
	k.leaseMu.Lock()
	defer k.leaseMu.Unlock()
	switch {
	case err == nil:
		k.leases[name] = lease
	case apierrors.IsConflict(err):
		delete(k.leases, name) // read again next time
	default:
		return fmt.Errorf("renewing the Lease of simulated node %s: %w", name, err)
	}
	return nil
}

// Run reports the simulated nodes' Pods and renews their Leases until ctx ends.
func (k *Kubelet) Run(ctx context.Context) error {
	defer k.queue.ShutDown()
	factory := informers.NewSharedInformerFactory(k.kube, 0)
	informer := factory.Core().V1().Pods().Informer()
	enqueue := func(obj any) {
		if pod, ok := obj.(*corev1.Pod); ok && k.simulated(pod.Spec.NodeName) {
			k.queue.Add(pod.Namespace + "/" + pod.Name)
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) }}); err != nil {
		return err
	}
	k.pods = informer.GetIndexer()
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return ctx.Err()
	}
	for range max(k.opts.Workers, 1) {
		go wait.UntilWithContext(ctx, k.work, time.Second)
	}
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := k.renewLeases(ctx); err != nil && ctx.Err() == nil {
			klog.FromContext(ctx).Error(err, "Renewing the simulated nodes' Leases")
		}
	}, leaseSeconds*time.Second/4)
	return nil
}

// simulated reports whether node is one of the simulation's.
func (k *Kubelet) simulated(node string) bool {
	_, ok := k.nodes[node]
	return ok
}

func (k *Kubelet) work(ctx context.Context) {
	for {
		key, quit := k.queue.Get()
		if quit {
			return
		}
		if err := k.sync(ctx, key); err != nil && ctx.Err() == nil {
			k.queue.AddRateLimited(key)
		} else {
			k.queue.Forget(key)
		}
		k.queue.Done(key)
	}
}
