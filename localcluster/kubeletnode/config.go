// Package kubeletnode renders the configuration of one vireo-local node that is a real kubelet
// with containerd and runc: containerd's config.toml, its registry hosts.toml, the CNI network
// template and the kubelet's KubeletConfiguration. Pure functions of Config, so that what a node
// runs with is table-tested without starting one.
package kubeletnode

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// Config is what one node's configuration depends on.
type Config struct {
	// Name is the node's name (vireo-local-0), also the kubelet's hostname.
	Name string
	// Address is the node's IP in its network namespace.
	Address string
	// Dir is the node's directory on the host: containerd's and the kubelet's state, the CNI
	// network's IP allocations, the Pods' logs.
	Dir string
	// BinDir holds runc and containerd-shim-runc-v2.
	BinDir string
	// CNIBinDir holds the CNI plugins (Debian's /usr/lib/cni).
	CNIBinDir string
	// Registry is vireo-local's plain-HTTP registry (host:port); the pause image comes from it.
	Registry string
	// PauseImage is the Pod sandbox image, in Registry.
	PauseImage string
	// CgroupRoot is the node's own cgroup (its kubepods live under it), so that nodes on one
	// host do not share one kubepods hierarchy.
	CgroupRoot string
	// ClientCAFile verifies clients of the kubelet's API (kube-apiserver's client certificate).
	ClientCAFile string
	// TLSCertFile and TLSKeyFile are the kubelet's serving certificate, from the cluster CA,
	// with the node's address as an IP SAN (so kubectl logs/exec verify it).
	TLSCertFile, TLSKeyFile string
	// CgroupV1 reports that the host has cgroup v1 (the kubelet refuses it unless told).
	CgroupV1 bool
	// ReservedMilliCPU and ReservedMemory (bytes) are kept from the node's Pods as
	// systemReserved: the other nodes' share of the host, so that N nodes on one machine
	// offer its CPUs and memory once between them, not N times. Zero for a single node.
	ReservedMilliCPU int64
	ReservedMemory   int64
}

// HostShare is what each of nodes nodes on a host with cpus CPUs and memory bytes reserves
// so that its allocatable is 1/nodes of the host: (nodes-1)/nodes of each.
func HostShare(cpus int, memory int64, nodes int) (milliCPU, reserved int64) {
	if nodes < 2 {
		return 0, 0
	}
	n := int64(nodes)
	return int64(cpus) * 1000 * (n - 1) / n, memory / n * (n - 1)
}

// Paths of the node's state under Dir.
func (c Config) ContainerdRoot() string   { return filepath.Join(c.Dir, "containerd") }
func (c Config) ContainerdConfig() string { return filepath.Join(c.Dir, "containerd.toml") }
func (c Config) KubeletRoot() string      { return filepath.Join(c.Dir, "kubelet") }
func (c Config) KubeletConfig() string    { return filepath.Join(c.Dir, "kubelet.yaml") }
func (c Config) PodLogs() string          { return filepath.Join(c.Dir, "pods-logs") }
func (c Config) CNIConfDir() string       { return filepath.Join(c.Dir, "cni", "net.d") }
func (c Config) CNIIPAMDir() string       { return filepath.Join(c.Dir, "cni", "ipam") }
func (c Config) CNITemplate() string      { return filepath.Join(c.Dir, "cni", "template.json") }
func (c Config) RegistryHostsDir() string { return filepath.Join(c.Dir, "registry-hosts") }
func (c Config) ResolvConf() string       { return filepath.Join(c.Dir, "resolv.conf") }

// KubeletRootInNode is the kubelet's root directory as the node's processes see it: its
// KubeletRoot bound at the standard path in the node's mount namespace, so that the hostPath
// volumes a cluster's components use there (a device plugin's
// /var/lib/kubelet/device-plugins, the Pods' directories) mean on a local node what they mean
// on any other.
const KubeletRootInNode = "/var/lib/kubelet"

// RuntimeSocket is containerd's CRI socket inside the node's mount namespace, where
// /run/containerd is the node's own directory (see MountNamespace).
const RuntimeSocket = "/run/containerd/containerd.sock"

// Containerd is containerd's config.toml (version 3, containerd 2.x). runc and the shim come
// from BinDir. restrict_oom_score_adj: hosts whose root lacks CAP_SYS_RESOURCE cannot lower a
// process's oom_score_adj, and without it every sandbox fails ("runc init: failed to update
// /proc/self/oom_score_adj: Permission denied"). The CNI configuration is rendered from
// the template once the kubelet passes the node's Pod CIDR. device_ownership_from_security_context:
// a device a device plugin hands a container (the launcher's /dev/kvm) belongs to the
// container's runAsUser and runAsGroup, so that a non-root launcher (uid 107) can open it, as
// KubeVirt's non-root launchers need on any containerd or CRI-O node.
func Containerd(c Config) string {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	return fmt.Sprintf(`version = 3
root = %s
state = "/run/containerd"

[grpc]
  address = %q

[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"

[plugins."io.containerd.cri.v1.images".pinned_images]
  sandbox = %s

[plugins."io.containerd.cri.v1.images".registry]
  config_path = %s

[plugins."io.containerd.cri.v1.runtime"]
  restrict_oom_score_adj = true
  enable_unprivileged_ports = false
  device_ownership_from_security_context = true

[plugins."io.containerd.cri.v1.runtime".cni]
  bin_dirs = [%s]
  conf_dir = %s
  conf_template = %s

[plugins."io.containerd.cri.v1.runtime".containerd]
  default_runtime_name = "runc"

[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"

[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
  BinaryName = %s
  SystemdCgroup = false
`, q(c.ContainerdRoot()), RuntimeSocket, q(c.PauseImage), q(c.RegistryHostsDir()), q(c.CNIBinDir),
		q(c.CNIConfDir()), q(c.CNITemplate()), q(filepath.Join(c.BinDir, "runc")))
}

// RegistryHosts is the hosts.toml that lets containerd pull from vireo-local's registry over
// plain HTTP; it goes in RegistryHostsDir()/<registry>/hosts.toml.
func RegistryHosts(c Config) string {
	return fmt.Sprintf("server = \"http://%s\"\n\n[host.\"http://%s\"]\n  capabilities = [\"pull\", \"resolve\"]\n", c.Registry, c.Registry)
}

// CNITemplate is the node's CNI network, rendered by containerd with the node's Pod CIDR: a
// bridge in the node's namespace that is the Pods' gateway (no masquerading: the host routes
// every node's Pod CIDR to it), host-local addresses kept under the node's directory.
func CNITemplate(c Config) string {
	conf := map[string]any{
		"cniVersion": "1.0.0",
		"name":       "vireo-local",
		"plugins": []any{
			map[string]any{
				"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
				"ipam": map[string]any{
					"type":    "host-local",
					"ranges":  [][]map[string]string{{{"subnet": "{{.PodCIDR}}"}}},
					"routes":  []map[string]string{{"dst": "0.0.0.0/0"}},
					"dataDir": c.CNIIPAMDir(),
				},
			},
			map[string]any{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}},
		},
	}
	b, _ := json.MarshalIndent(conf, "", "  ")
	return string(b) + "\n"
}

// Kubelet is the kubelet's KubeletConfiguration: webhook authentication and authorization
// through kube-apiserver (no anonymous access), the serving certificate from the cluster CA,
// cgroupfs under the node's own cgroup root, its own Pod log directory, eviction only when a
// disk is nearly full (a development machine's disk is often fuller than a server's), no
// DNS server handed to Pods (there is none in vireo-local; the host's must not be used), and
// the other nodes' share of the host reserved.
func Kubelet(c Config) string {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: %s
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true, cacheTTL: 30s}
  x509: {clientCAFile: %q}
authorization:
  mode: Webhook
tlsCertFile: %q
tlsPrivateKeyFile: %q
containerRuntimeEndpoint: unix://%s
cgroupDriver: cgroupfs
cgroupRoot: %s
cgroupsPerQOS: true
enforceNodeAllocatable: ["pods"]
podLogsDir: %q
resolvConf: %q
failSwapOn: false
serializeImagePulls: false
imageGCHighThresholdPercent: 95
imageGCLowThresholdPercent: 90
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%%
  imagefs.available: 1%%
  nodefs.inodesFree: 1%%
shutdownGracePeriod: 0s
`, c.Address, c.ClientCAFile, c.TLSCertFile, c.TLSKeyFile, RuntimeSocket, c.CgroupRoot, c.PodLogs(), c.ResolvConf())
	if c.ReservedMilliCPU > 0 || c.ReservedMemory > 0 {
		fmt.Fprintf(&b, "systemReserved:\n  cpu: %dm\n  memory: \"%d\"\n", c.ReservedMilliCPU, c.ReservedMemory)
	}
	if c.CgroupV1 {
		// KEP-5573: the kubelet refuses cgroup v1 unless told it may run on it.
		b.WriteString("failCgroupV1: false\n")
	}
	return b.String()
}
