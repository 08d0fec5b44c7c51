package localcluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/vireo-dev/vireo/localcluster/kubeletnode"
)

// nodeRuntime is recorded with an installation whose local nodes are the upstream kubelet with
// containerd and runc. Installations from before it ran vireo-local's own node, which is gone.
const nodeRuntime = "kubelet"

// cgroupV1Controllers are the cgroup v1 hierarchies a kubelet node gets its own root in.
var cgroupV1Controllers = []string{"blkio", "cpu", "cpuacct", "cpuset", "devices", "freezer", "memory", "pids", "systemd"}

// cgroupRoot is node name's own cgroup (under every hierarchy on v1).
func cgroupRoot(name string) string { return "/" + name }

func hostHasCgroupV1() bool {
	_, err := os.Stat("/sys/fs/cgroup/cgroup.controllers")
	return err != nil
}

// kubeletNodeConfig is node i's configuration.
func (c *Cluster) kubeletNodeConfig(i int) kubeletnode.Config {
	name := c.opts.Network.NodeName(i)
	return kubeletnode.Config{
		Name:         name,
		Address:      c.opts.Network.NodeAddress(i).String(),
		Dir:          c.abs(c.opts.NodeDir(name)),
		BinDir:       c.abs(c.opts.BinDir),
		CNIBinDir:    "/usr/lib/cni",
		Registry:     c.RegistryAddress(),
		PauseImage:   c.RegistryAddress() + "/vireo/pause:latest",
		CgroupRoot:   cgroupRoot(name),
		ClientCAFile: c.pkiFile("ca.crt"),
		TLSCertFile:  c.pkiFile("node-" + name + "-serving.crt"),
		TLSKeyFile:   c.pkiFile("node-" + name + "-serving.key"),
		CgroupV1:     hostHasCgroupV1(),
	}
}

// hostMemory is the machine's memory in bytes (MemTotal), 0 when /proc/meminfo does not say.
func hostMemory() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
			kib, _ := strconv.ParseInt(f[1], 10, 64)
			return kib << 10
		}
	}
	return 0
}

// writeKubeletNodeConfig writes node i's configuration files.
func (c *Cluster) writeKubeletNodeConfig(i int) error {
	cfg := c.kubeletNodeConfig(i)
	// Only the kubelet's configuration needs the host's size (the supervisor builds the
	// nodes' components on every check).
	cfg.ReservedMilliCPU, cfg.ReservedMemory = kubeletnode.HostShare(runtime.NumCPU(), hostMemory(), c.nodeCount())
	hosts := filepath.Join(cfg.RegistryHostsDir(), cfg.Registry)
	for _, d := range []string{cfg.Dir, cfg.ContainerdRoot(), cfg.KubeletRoot(), cfg.PodLogs(), cfg.CNIConfDir(), cfg.CNIIPAMDir(), hosts} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	files := map[string]string{
		cfg.ContainerdConfig():             kubeletnode.Containerd(cfg),
		filepath.Join(hosts, "hosts.toml"): kubeletnode.RegistryHosts(cfg),
		cfg.CNITemplate():                  kubeletnode.CNITemplate(cfg),
		cfg.KubeletConfig():                kubeletnode.Kubelet(cfg),
		cfg.ResolvConf():                   "# vireo-local has no cluster DNS, and Pods must not use the host's resolver\n",
	}
	for path, content := range files {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// AllowPlainHTTPRegistry lets every local node's containerd pull from the registry at address
// (host:port) over plain HTTP, as from vireo-local's own: another registry on the bridge, such
// as one a test serves. containerd reads the hosts directory on every pull.
func (c *Cluster) AllowPlainHTTPRegistry(address string) error {
	if _, _, err := net.SplitHostPort(address); err != nil || strings.ContainsAny(address, "/\\") {
		return fmt.Errorf("registry address %q is not host:port", address)
	}
	for i := range c.nodeCount() {
		cfg := c.kubeletNodeConfig(i)
		cfg.Registry = address
		dir := filepath.Join(cfg.RegistryHostsDir(), address)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "hosts.toml"), []byte(kubeletnode.RegistryHosts(cfg)), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// ensureCgroupRoot creates node name's cgroup under every v1 hierarchy (the kubelet refuses a
// cgroupRoot that does not exist), with cpuset's CPUs and memory nodes copied from the parent.
func ensureCgroupRoot(name string) error {
	if !hostHasCgroupV1() {
		return os.MkdirAll(filepath.Join("/sys/fs/cgroup", name), 0o755)
	}
	for _, ctrl := range cgroupV1Controllers {
		parent := filepath.Join("/sys/fs/cgroup", ctrl)
		if _, err := os.Stat(parent); err != nil {
			continue
		}
		dir := filepath.Join(parent, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("cgroup %s: %w", dir, err)
		}
		if ctrl != "cpuset" {
			continue
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			b, err := os.ReadFile(filepath.Join(parent, f))
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
				return fmt.Errorf("%s/%s: %w", dir, f, err)
			}
		}
	}
	return nil
}

// removeCgroupRoot removes node name's cgroups, deepest first (each must be empty of processes).
func removeCgroupRoot(name string) {
	roots := []string{filepath.Join("/sys/fs/cgroup", name)}
	for _, ctrl := range cgroupV1Controllers {
		roots = append(roots, filepath.Join("/sys/fs/cgroup", ctrl, name))
	}
	for _, root := range roots {
		var dirs []string
		_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			_ = syscall.Rmdir(dirs[i])
		}
	}
}

// containerd is kubelet node i's container runtime, in the node's network and mount namespaces.
func (c *Cluster) containerd(i int) Component {
	cfg := c.kubeletNodeConfig(i)
	name := cfg.Name
	socket := filepath.Join(cfg.Dir, "run-containerd", "containerd.sock")
	return Component{Name: "containerd-" + strconv.Itoa(i), Path: c.abs(c.opts.Bin("containerd")), Dir: &c.opts.Layout,
		Netns: name, Mntns: c.MountNamespace(name), Args: []string{"--config", cfg.ContainerdConfig()},
		Ready: func(ctx context.Context) error {
			conn, err := (&net.Dialer{Timeout: time.Second}).DialContext(ctx, "unix", socket)
			if err != nil {
				return err
			}
			return conn.Close()
		}}
}

// kubelet is kubelet node i's kubelet, in the node's network and mount namespaces.
func (c *Cluster) kubelet(i int) Component {
	cfg := c.kubeletNodeConfig(i)
	return Component{Name: cfg.Name, Path: c.abs(c.opts.Bin("kubelet")), Dir: &c.opts.Layout,
		Netns: cfg.Name, Mntns: c.MountNamespace(cfg.Name), Args: []string{
			"--config", cfg.KubeletConfig(),
			"--kubeconfig", c.abs(c.kubeconfigPath(cfg.Name)),
			"--root-dir", kubeletnode.KubeletRootInNode,
			"--hostname-override", cfg.Name,
			"--node-ip", cfg.Address,
		}, Ready: c.nodeRegistered(cfg.Name)}
}

// prepareKubeletNode makes what kubelet node i needs before its processes start.
func (c *Cluster) prepareKubeletNode(i int) error {
	name := c.opts.Network.NodeName(i)
	if err := c.writeKubeletNodeConfig(i); err != nil {
		return err
	}
	if err := ensureCgroupRoot(name); err != nil {
		return err
	}
	return c.ensureMountNamespace(name)
}

// stopKubeletNodeContainers ends what kubelet node name leaves running once its kubelet and
// containerd have stopped (the containers and their shims outlive both by design): first every
// process in the node's cgroups (the containers, each in a mount namespace of its own), then
// every process left in the node's mount namespace (the shims); then it removes the cgroups and
// releases the namespace, with every mount made in it.
func (c *Cluster) stopKubeletNodeContainers(name string) error {
	file := c.MountNamespace(name)
	for _, group := range []func() []int{func() []int { return processesInCgroup(name) }, func() []int { return processesInMountNamespace(file) }} {
		for _, pid := range group() {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		deadline := time.Now().Add(10 * time.Second)
		for len(group()) > 0 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if left := group(); len(left) > 0 {
			return fmt.Errorf("node %s: processes %v did not end", name, left)
		}
	}
	removeCgroupRoot(name)
	if err := c.removeMountNamespace(name); err != nil {
		return err
	}
	// The CNI bridge in the node's network namespace has no Pod left; the next start makes it anew.
	if run("ip", "-n", name, "link", "show", "cni0") == nil {
		if err := run("ip", "-n", name, "link", "del", "cni0"); err != nil {
			return err
		}
	}
	// The Pods' network namespace files stay as empty files once their mounts are gone.
	netnsDir := filepath.Join(c.abs(c.opts.NodeDir(name)), "run-netns")
	entries, _ := os.ReadDir(netnsDir)
	for _, e := range entries {
		_ = os.Remove(filepath.Join(netnsDir, e.Name()))
	}
	return nil
}

// PodProcesses lists the processes of every container of local node name's Pods (their
// cgroups), for benchmarks that measure what one of them uses.
func (c *Cluster) PodProcesses(name string) []int { return processesInCgroup(name) }

// processesInCgroup lists the processes in node name's cgroups (its kubepods): on v1 the pids
// hierarchy (every container process is in each hierarchy), on v2 the unified one.
func processesInCgroup(name string) []int {
	root := filepath.Join("/sys/fs/cgroup", "pids", name)
	if !hostHasCgroupV1() {
		root = filepath.Join("/sys/fs/cgroup", name)
	}
	var pids []int
	_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "cgroup.procs" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && pid != os.Getpid() {
				pids = append(pids, pid)
			}
		}
		return nil
	})
	return pids
}
