package podnet

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/types"
	types100 "github.com/containernetworking/cni/pkg/types/100"
	"github.com/google/uuid"
	"k8s.io/klog/v2"
)

const (
	// networkName names the CNI network; libcni's cache files and host-local's allocation
	// directory are named after it.
	networkName = "vireo"
	// ifName is the Pod's interface, as a kubelet names it.
	ifName = "eth0"
	// podInfix separates the node's namespace name from the Pod's UID in a Pod's namespace name.
	podInfix = "-pod-"
	// debianPackage provides the CNI plugins on Debian.
	debianPackage = "containernetworking-plugins"
)

// requiredPlugins are the CNI plugins the network configuration uses.
var requiredPlugins = []string{"bridge", "host-local", "loopback"}

// DefaultPluginDirs are where Debian (containernetworking-plugins) and the upstream release
// tarballs install the CNI plugins.
var DefaultPluginDirs = []string{"/usr/lib/cni", "/opt/cni/bin"}

// Config of a node's Pod network.
type Config struct {
	// NodeName is the Node's name; it is part of every Pod namespace name, so that nodes
	// sharing the machine never list or delete each other's Pods.
	NodeName string
	// PodCIDR is the Node's spec.podCIDR (IPv4), e.g. 10.244.0.0/24.
	PodCIDR string
	// Prefix starts every network namespace name of the installation, e.g. "vireo-local":
	// a Pod's namespace is "<Prefix>-<NodeName>-pod-<UID>".
	Prefix string
	// StateDir holds libcni's cache (StateDir/cache) and host-local's allocations
	// (StateDir/ipam); it is per node, never /var/lib/cni, which other installations share.
	StateDir string
	// PluginDirs are searched for the CNI plugins; default DefaultPluginDirs.
	PluginDirs []string
	// Bridge is the bridge the Pods are attached to inside the node's namespace; default cni0.
	Bridge string
}

// PodRef identifies a Pod. UID names its network namespace and CNI attachment; Namespace and
// Name are passed to the plugins as K8S_POD_NAMESPACE and K8S_POD_NAME.
type PodRef struct {
	Namespace, Name, UID string
}

// String is namespace/name (uid), for messages.
func (p PodRef) String() string { return fmt.Sprintf("%s/%s (uid %s)", p.Namespace, p.Name, p.UID) }

// Attachment is where a Pod's processes run to be on the Pod network.
type Attachment struct {
	// Netns is the namespace's name for `ip netns`.
	Netns string
	// NetnsPath is the namespace's bind mount, for nsenter --net= or setns.
	NetnsPath string
	// IP is the Pod's address from the node's Pod CIDR.
	IP net.IP
}

// Network sets up and tears down the network namespaces of one node's Pods. Its state is on
// disk only, so a new Network for the same Config (a restarted node) adopts earlier Pods.
type Network struct {
	cfg    Config
	subnet *net.IPNet
	cni    *libcni.CNIConfig
	list   *libcni.NetworkConfigList
	// pods serialises Setup and Teardown of each Pod, keeping its namespace, cache entry and
	// allocation consistent with each other. Different Pods proceed in parallel, as a
	// kubelet's do: the plugins (bridge, host-local with its own lock, loopback) allow it, and
	// one at a time made a node start ten Pods in 3-4 s.
	pods podLocks
}

// podLocks hands out one mutex per Pod UID while it is in use.
type podLocks struct {
	mu    sync.Mutex
	locks map[string]*podLock
}

type podLock struct {
	sync.Mutex
	users int
}

// lock locks uid's mutex and returns its unlock.
func (p *podLocks) lock(uid string) func() {
	p.mu.Lock()
	if p.locks == nil {
		p.locks = map[string]*podLock{}
	}
	l := p.locks[uid]
	if l == nil {
		l = &podLock{}
		p.locks[uid] = l
	}
	l.users++
	p.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		p.mu.Lock()
		if l.users--; l.users == 0 {
			delete(p.locks, uid)
		}
		p.mu.Unlock()
	}
}

// New validates cfg, finds the CNI plugins and prepares the state directory.
func New(cfg Config) (*Network, error) {
	if len(cfg.PluginDirs) == 0 {
		cfg.PluginDirs = DefaultPluginDirs
	}
	if cfg.Bridge == "" {
		cfg.Bridge = "cni0"
	}
	if err := validateConfig(cfg); err != nil {
		return nil, err
	}
	ip, subnet, err := net.ParseCIDR(cfg.PodCIDR)
	if err != nil || ip.To4() == nil || !ip.Equal(subnet.IP) {
		return nil, fmt.Errorf("pod network of node %s: PodCIDR %q is not an IPv4 network address in CIDR notation (e.g. 10.244.0.0/24): check the Node's spec.podCIDR", cfg.NodeName, cfg.PodCIDR)
	}
	if ones, _ := subnet.Mask.Size(); ones > 30 {
		return nil, fmt.Errorf("pod network of node %s: PodCIDR %s is too small: it needs a gateway and Pod addresses, use /30 or larger (e.g. /24)", cfg.NodeName, cfg.PodCIDR)
	}
	if err := findPlugins(cfg.PluginDirs); err != nil {
		return nil, err
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return nil, fmt.Errorf("the ip command (Debian package iproute2) is needed to create Pod network namespaces: %w", err)
	}
	conf, err := confList(cfg.Bridge, subnet.String(), filepath.Join(cfg.StateDir, "ipam"))
	if err != nil {
		return nil, err
	}
	list, err := libcni.ConfListFromBytes(conf)
	if err != nil {
		return nil, fmt.Errorf("pod network of node %s: invalid CNI configuration: %w", cfg.NodeName, err)
	}
	if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("pod network of node %s: creating its state directory: %w", cfg.NodeName, err)
	}
	return &Network{
		cfg:    cfg,
		subnet: subnet,
		cni:    libcni.NewCNIConfigWithCacheDir(cfg.PluginDirs, filepath.Join(cfg.StateDir, "cache"), nil),
		list:   list,
	}, nil
}

func validateConfig(cfg Config) error {
	switch {
	case cfg.NodeName == "" || strings.ContainsAny(cfg.NodeName, "/ \t\n"):
		return fmt.Errorf("pod network: NodeName %q must be a Node name (non-empty, no slash or space)", cfg.NodeName)
	case cfg.Prefix == "" || strings.ContainsAny(cfg.Prefix, "/ \t\n"):
		return fmt.Errorf("pod network of node %s: Prefix %q must be a network namespace name prefix (non-empty, no slash or space), e.g. vireo-local", cfg.NodeName, cfg.Prefix)
	case !filepath.IsAbs(cfg.StateDir):
		return fmt.Errorf("pod network of node %s: StateDir %q must be an absolute path under the node's root directory", cfg.NodeName, cfg.StateDir)
	case len(cfg.Prefix)+1+len(cfg.NodeName)+len(podInfix)+36 > maxNetnsName:
		return fmt.Errorf("pod network of node %s: Prefix and NodeName are too long for network namespace names (at most %d bytes with the Pod UID): shorten them", cfg.NodeName, maxNetnsName)
	}
	return nil
}

// findPlugins checks that every plugin the configuration uses is in one of dirs.
func findPlugins(dirs []string) error {
	for _, p := range requiredPlugins {
		found := false
		for _, d := range dirs {
			if st, err := os.Stat(filepath.Join(d, p)); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("CNI plugin %q not found in %s: install the standard CNI plugins (apt-get install %s)", p, strings.Join(dirs, ", "), debianPackage)
		}
	}
	return nil
}

// NetnsName is the name of the network namespace of the Pod with this UID.
func (n *Network) NetnsName(uid string) string {
	return n.netnsPrefix() + uid
}

func (n *Network) netnsPrefix() string { return n.cfg.Prefix + "-" + n.cfg.NodeName + podInfix }

// validUID reports whether uid is a UUID in its canonical form, as the API server assigns
// them; only those name namespaces, so no other name can be mistaken for a Pod's.
func validUID(uid string) bool {
	u, err := uuid.Parse(uid)
	return err == nil && u.String() == uid
}

func (n *Network) runtimeConf(pod PodRef, netnsPath string) *libcni.RuntimeConf {
	return &libcni.RuntimeConf{
		ContainerID: pod.UID,
		NetNS:       netnsPath,
		IfName:      ifName,
		Args: [][2]string{
			{"IgnoreUnknown", "1"},
			{"K8S_POD_NAMESPACE", pod.Namespace},
			{"K8S_POD_NAME", pod.Name},
			{"K8S_POD_UID", pod.UID},
		},
	}
}

// Setup gives the Pod its network namespace and address. It is idempotent: a Pod whose
// namespace and CNI attachment exist and pass CNI CHECK keeps them (a restarted node adopts
// its Pods); anything partial is released and set up afresh.
func (n *Network) Setup(ctx context.Context, pod PodRef) (Attachment, error) {
	if !validUID(pod.UID) {
		return Attachment{}, fmt.Errorf("pod network of node %s: pod %s: UID %q is not a UUID", n.cfg.NodeName, pod, pod.UID)
	}
	defer n.pods.lock(pod.UID)()
	name := n.NetnsName(pod.UID)
	path := filepath.Join(netnsDir, name)
	rt := n.runtimeConf(pod, path)
	if isNetns(path) {
		if ip := n.adopt(ctx, pod, rt); ip != nil {
			return Attachment{Netns: name, NetnsPath: path, IP: ip}, nil
		}
	}
	// A new Pod has nothing to release: no namespace and no CNI result cached for it.
	if cached, _ := n.cni.GetNetworkListCachedResult(n.list, rt); cached != nil || isNetns(path) {
		if err := n.release(ctx, pod); err != nil {
			return Attachment{}, err
		}
	}
	ip, err := n.attach(ctx, pod, rt)
	if err != nil {
		if rerr := n.release(ctx, pod); rerr != nil {
			klog.FromContext(ctx).Error(rerr, "Releasing a failed Pod network setup", "node", n.cfg.NodeName, "pod", pod.String())
		}
		return Attachment{}, err
	}
	return Attachment{Netns: name, NetnsPath: path, IP: ip}, nil
}

// attach creates the namespace and runs CNI ADD in it.
func (n *Network) attach(ctx context.Context, pod PodRef, rt *libcni.RuntimeConf) (net.IP, error) {
	name := filepath.Base(rt.NetNS)
	if err := addNetns(ctx, name); err != nil {
		return nil, fmt.Errorf("pod network of node %s: creating network namespace for pod %s: %w", n.cfg.NodeName, pod, err)
	}
	// Launchers bind privileged ports as non-root users, as containers may.
	if err := setSysctl(rt.NetNS, "net.ipv4.ip_unprivileged_port_start", "0"); err != nil {
		return nil, fmt.Errorf("pod network of node %s: pod %s: %w", n.cfg.NodeName, pod, err)
	}
	res, err := n.cni.AddNetworkList(ctx, n.list, rt)
	if err != nil {
		return nil, fmt.Errorf("pod network of node %s: CNI ADD for pod %s: %w", n.cfg.NodeName, pod, err)
	}
	ip, err := n.resultIP(res)
	if err != nil {
		return nil, fmt.Errorf("pod network of node %s: CNI ADD for pod %s: %w", n.cfg.NodeName, pod, err)
	}
	return ip, nil
}

// adopt returns the Pod's address if its existing attachment is cached and passes CNI CHECK.
func (n *Network) adopt(ctx context.Context, pod PodRef, rt *libcni.RuntimeConf) net.IP {
	logger := klog.FromContext(ctx).WithValues("node", n.cfg.NodeName, "pod", pod.String())
	cached, err := n.cni.GetNetworkListCachedResult(n.list, rt)
	if err != nil || cached == nil {
		logger.V(2).Info("Pod network namespace has no cached CNI result; setting it up afresh", "err", err)
		return nil
	}
	ip, err := n.resultIP(cached)
	if err != nil {
		logger.Info("Cached CNI result of the Pod is unusable; setting it up afresh", "err", err)
		return nil
	}
	if err := n.cni.CheckNetworkList(ctx, n.list, rt); err != nil {
		logger.Info("CNI CHECK of the Pod's network failed; setting it up afresh", "err", err)
		return nil
	}
	return ip
}

// resultIP is the first IPv4 address of a CNI result within the Pod CIDR.
func (n *Network) resultIP(res types.Result) (net.IP, error) {
	r, err := types100.NewResultFromResult(res)
	if err != nil {
		return nil, fmt.Errorf("reading the CNI result: %w", err)
	}
	for _, ipc := range r.IPs {
		if ip := ipc.Address.IP.To4(); ip != nil && n.subnet.Contains(ip) {
			return ip, nil
		}
	}
	return nil, fmt.Errorf("the CNI result has no address in %s: %v", n.subnet, r.IPs)
}

// Teardown runs CNI DEL for the Pod (releasing its address even if its namespace is gone)
// and deletes its namespace. Tearing down an unknown or already torn-down Pod does nothing.
func (n *Network) Teardown(ctx context.Context, pod PodRef) error {
	if !validUID(pod.UID) {
		return fmt.Errorf("pod network of node %s: pod %s: UID %q is not a UUID", n.cfg.NodeName, pod, pod.UID)
	}
	defer n.pods.lock(pod.UID)()
	return n.release(ctx, pod)
}

// release is Teardown under the Pod's lock. CNI DEL comes first, while the namespace can still be
// named to the plugins; without the namespace the spec lets DEL run with an empty path, and
// host-local still frees the address.
func (n *Network) release(ctx context.Context, pod PodRef) error {
	name := n.NetnsName(pod.UID)
	path := filepath.Join(netnsDir, name)
	nsPath := path
	if !isNetns(path) {
		nsPath = ""
	}
	if err := n.cni.DelNetworkList(ctx, n.list, n.runtimeConf(pod, nsPath)); err != nil {
		return fmt.Errorf("pod network of node %s: CNI DEL for pod %s: %w", n.cfg.NodeName, pod, err)
	}
	if err := deleteNetns(ctx, name); err != nil {
		return fmt.Errorf("pod network of node %s: deleting the network namespace of pod %s: %w", n.cfg.NodeName, pod, err)
	}
	return nil
}
