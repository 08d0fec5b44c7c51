package node

import (
	"bufio"
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
)

// KubeletVersion is what the Node reports as its kubelet: the Kubernetes release vireo-local
// is built from, marked as a vireo-local node.
const KubeletVersion = "v1.37.2-vireo-local"

// nodeStatus is the Node as this process reports it. It is NotReady, with
// NetworkUnavailable, until kube-controller-manager has assigned the Node a Pod CIDR, and
// Ready from then on; virtual-kubelet's node controller publishes it and renews the Lease.
type nodeStatus struct {
	client kubernetes.Interface
	cfg    Config

	mu       sync.Mutex
	notify   func(*corev1.Node)
	node     *corev1.Node
	cidrOnce sync.Once
	// podCIDR is closed once PodCIDR is known.
	podCIDR chan struct{}
	cidr    string
}

func newNodeStatus(client kubernetes.Interface, cfg Config) *nodeStatus {
	s := &nodeStatus{client: client, cfg: cfg, podCIDR: make(chan struct{})}
	s.node = s.build(false)
	return s
}

func (s *nodeStatus) initial() *corev1.Node { return s.node.DeepCopy() }

// build is the Node with Ready as given.
func (s *nodeStatus) build(ready bool) *corev1.Node {
	cfg := s.cfg
	capacity := hostCapacity(cfg.Share)
	now := metav1.Now()
	readyCond := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "PodCIDRPending",
		Message: "waiting for kube-controller-manager to assign the node a Pod CIDR", LastHeartbeatTime: now, LastTransitionTime: now}
	netCond := corev1.NodeCondition{Type: corev1.NodeNetworkUnavailable, Status: corev1.ConditionTrue, Reason: "PodCIDRPending",
		Message: "no Pod CIDR yet", LastHeartbeatTime: now, LastTransitionTime: now}
	if ready {
		readyCond.Status, readyCond.Reason, readyCond.Message = corev1.ConditionTrue, "KubeletReady", "vireo-local node is posting ready status"
		netCond.Status, netCond.Reason, netCond.Message = corev1.ConditionFalse, "RouteCreated", "Pod network set up on "+s.cidr
	}
	conds := []corev1.NodeCondition{readyCond, netCond}
	for _, c := range [][2]string{{string(corev1.NodeMemoryPressure), "KubeletHasSufficientMemory"},
		{string(corev1.NodeDiskPressure), "KubeletHasNoDiskPressure"}, {string(corev1.NodePIDPressure), "KubeletHasSufficientPID"}} {
		conds = append(conds, corev1.NodeCondition{Type: corev1.NodeConditionType(c[0]), Status: corev1.ConditionFalse, Reason: c[1],
			LastHeartbeatTime: now, LastTransitionTime: now})
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: cfg.Name, Labels: map[string]string{
			corev1.LabelHostname: cfg.Name, corev1.LabelOSStable: runtime.GOOS, corev1.LabelArchStable: runtime.GOARCH,
			"type": "vireo-local",
		}},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity,
			Conditions:  conds,
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: cfg.Address.String()},
				{Type: corev1.NodeHostName, Address: cfg.Name},
			},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: Port}},
			NodeInfo: corev1.NodeSystemInfo{
				KubeletVersion: KubeletVersion, OperatingSystem: runtime.GOOS, Architecture: runtime.GOARCH,
				KernelVersion: kernelVersion(), OSImage: "vireo-local (host processes)", ContainerRuntimeVersion: "vireo-local://" + KubeletVersion,
			},
		},
	}
}

// Ping reports the node alive; virtual-kubelet renews the Lease while it succeeds.
func (s *nodeStatus) Ping(context.Context) error { return nil }

// NotifyNodeStatus registers the callback that publishes a changed Node.
func (s *nodeStatus) NotifyNodeStatus(_ context.Context, cb func(*corev1.Node)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notify = cb
}

// watchPodCIDR waits until the Node has spec.podCIDR, then reports the node Ready.
func (s *nodeStatus) watchPodCIDR(ctx context.Context) {
	sel := fields.OneTermEqualSelector("metadata.name", s.cfg.Name).String()
	_ = wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := s.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{FieldSelector: sel})
		if err != nil {
			klog.ErrorS(err, "reading the Node's Pod CIDR")
			return false, nil
		}
		if len(list.Items) == 0 || list.Items[0].Spec.PodCIDR == "" {
			return false, nil
		}
		s.setPodCIDR(list.Items[0].Spec.PodCIDR)
		return true, nil
	})
}

func (s *nodeStatus) setPodCIDR(cidr string) {
	s.cidrOnce.Do(func() {
		s.mu.Lock()
		s.cidr = cidr
		s.node = s.build(true)
		notify, n := s.notify, s.node.DeepCopy()
		s.mu.Unlock()
		close(s.podCIDR)
		klog.InfoS("node has its Pod CIDR; Ready", "podCIDR", cidr)
		if notify != nil {
			notify(n)
		}
	})
}

// waitPodCIDR returns the Node's Pod CIDR once it is assigned.
func (s *nodeStatus) waitPodCIDR(ctx context.Context) (string, error) {
	select {
	case <-s.podCIDR:
		return s.cidr, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// hostCapacity is 1/share of the host's CPUs and memory, and 110 Pods as a kubelet's default.
func hostCapacity(share int) corev1.ResourceList {
	if share < 1 {
		share = 1
	}
	cpus := runtime.NumCPU() * 1000 / share
	return corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewMilliQuantity(int64(cpus), resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(memTotal()/int64(share), resource.BinarySI),
		corev1.ResourcePods:             resource.MustParse("110"),
		corev1.ResourceEphemeralStorage: resource.MustParse("20Gi"),
	}
}

// memTotal reads MemTotal from /proc/meminfo, in bytes.
func memTotal() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, _ := strconv.ParseInt(fields[1], 10, 64)
			return kb * 1024
		}
	}
	return 0
}

func kernelVersion() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
