package localcluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/vireo-dev/vireo/localcluster/pki"
)

// kubeletClientUser is kube-apiserver's identity towards the nodes' API (logs, exec).
const kubeletClientUser = "kube-apiserver-kubelet-client"

// NodeDir is local node name's directory: its Pods, their logs and volumes, CNI state.
func (l Layout) NodeDir(name string) string { return filepath.Join(l.Root, "nodes", name) }

// nodeCount is the number of local nodes: as many as asked, else as many as the last Up
// started (recorded in the run directory), at least one.
func (c *Cluster) nodeCount() int {
	if c.opts.Nodes > 0 {
		return c.opts.Nodes
	}
	b, err := os.ReadFile(c.nodeCountFile())
	if n, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil && n > 0 {
		return n
	}
	return 1
}

func (c *Cluster) nodeCountFile() string { return filepath.Join(c.opts.Run(), "nodes") }

// checkNodeCount refuses to remove nodes from an installation (their Pods would be lost);
// adding nodes is fine.
func (c *Cluster) checkNodeCount() error {
	if b, err := os.ReadFile(c.nodeCountFile()); err == nil {
		if had, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && had > c.nodeCount() {
			return fmt.Errorf("this installation has %d local nodes, and up asked for %d: nodes can be added, not removed; "+
				"run up with --nodes %d (or NODES=%d), or start afresh with `vireo-local down --purge`", had, c.nodeCount(), had, had)
		}
	}
	return nil
}

// recordNodeCount remembers how many nodes Up starts, for down, status and restart.
func (c *Cluster) recordNodeCount() error {
	if err := os.MkdirAll(c.opts.Run(), 0o755); err != nil {
		return err
	}
	return os.WriteFile(c.nodeCountFile(), []byte(strconv.Itoa(c.nodeCount())+"\n"), 0o644)
}

// NodeNames lists the local nodes' names.
func (c *Cluster) NodeNames() []string {
	names := make([]string, c.nodeCount())
	for i := range names {
		names[i] = c.opts.Network.NodeName(i)
	}
	return names
}

// nodeCertificates issues each node's client certificate (system:node:<name> in
// system:nodes, as the Node authorizer expects) and serving certificate (its name and
// address), and kube-apiserver's client certificate for the nodes' API.
func (c *Cluster) nodeCertificates(ca *pki.CA) error {
	if _, err := ca.ClientCert(kubeletClientUser, kubeletClientUser, nil); err != nil {
		return err
	}
	// kube-proxy's identity, bound to system:node-proxier by the bootstrap policy.
	if _, err := ca.ClientCert("kube-proxy", "system:kube-proxy", nil); err != nil {
		return err
	}
	for i, name := range c.NodeNames() {
		if _, err := ca.ClientCert("node-"+name+"-client", "system:node:"+name, []string{"system:nodes"}); err != nil {
			return err
		}
		if _, err := ca.ServingCert("node-"+name+"-serving", []string{name}, []net.IP{c.opts.Network.NodeAddress(i)}); err != nil {
			return err
		}
	}
	return nil
}

// kubeProxy is node i's kube-proxy, in the node's network namespace: it programs the
// Services' ClusterIPs there with iptables, for the node's Pods and the node itself. The
// conntrack sizes stay as they are (they are read-only outside the host's namespace).
func (c *Cluster) kubeProxy(i int) Component {
	l := &c.opts.Layout
	name, addr := c.opts.Network.NodeName(i), c.opts.Network.NodeAddress(i).String()
	return Component{Name: "kube-proxy-" + strconv.Itoa(i), Path: c.abs(l.Bin("kube-proxy")), Dir: l, Netns: name, Args: []string{
		"--kubeconfig", c.abs(c.kubeconfigPath("kube-proxy")),
		"--hostname-override", name,
		"--bind-address", addr,
		"--proxy-mode", "iptables",
		"--cluster-cidr", c.opts.Network.ClusterCIDR,
		"--detect-local-mode", "ClusterCIDR",
		"--conntrack-max-per-core", "0", "--conntrack-min", "0",
		"--nodeport-addresses", addr + "/32",
		"--healthz-bind-address", addr + ":10256",
		"--metrics-bind-address", "127.0.0.1:10249",
	}}
}

// nodes are the local nodes' components: each node's containerd and kubelet, then its kube-proxy.
func (c *Cluster) nodes() []Component {
	var comps []Component
	for i := range c.nodeCount() {
		comps = append(comps, c.nodeComponents(i)...)
	}
	return comps
}

// nodeComponents are local node i's processes, in the order they start.
func (c *Cluster) nodeComponents(i int) []Component {
	return []Component{c.containerd(i), c.kubelet(i), c.kubeProxy(i)}
}

// nodeRegistered is ready once the Node object exists (it turns Ready when it has a Pod CIDR).
func (c *Cluster) nodeRegistered(name string) func(context.Context) error {
	return func(ctx context.Context) error {
		client, err := c.kubeClient()
		if err != nil {
			return err
		}
		_, err = client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		return err
	}
}

func (c *Cluster) kubeClient() (*kubernetes.Clientset, error) {
	cfg, err := c.RESTConfig()
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// startNodes prepares each node's network namespace and starts the node; then, as
// kube-controller-manager assigns Pod CIDRs, routes each node's CIDR to it from the host
// and the other nodes, and waits until every node is Ready.
func (c *Cluster) startNodes(ctx context.Context, started *[]Component) error {
	if err := c.recordNodeCount(); err != nil {
		return err
	}
	for i := range c.nodeCount() {
		if err := c.opts.Network.EnsureNode(i); err != nil {
			return err
		}
		if err := c.prepareKubeletNode(i); err != nil {
			return err
		}
		for _, comp := range c.nodeComponents(i) {
			if err := c.startAndWait(ctx, comp, started); err != nil {
				return err
			}
		}
	}
	client, err := c.kubeClient()
	if err != nil {
		return err
	}
	names := c.NodeNames()
	c.say("waiting for nodes %v to get Pod CIDRs and turn Ready", names)
	var pending []string
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		pending = nil
		for i, name := range names {
			n, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil || n.Spec.PodCIDR == "" || !nodeReady(n) {
				pending = append(pending, name)
				continue
			}
			if err := c.opts.Network.RoutePodCIDR(len(names), i, n.Spec.PodCIDR); err != nil {
				return false, err
			}
		}
		return len(pending) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("nodes %v not Ready with a Pod CIDR: %w", pending, err)
	}
	return nil
}

func nodeReady(n *corev1.Node) bool {
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}
