package node

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/vireo-dev/vireo/localcluster/node/container"
)

// etcHostsFile is the Pod's kubelet-managed hosts file in its directory.
const etcHostsFile = "etc-hosts"

// podHostname is the hostname a Pod's containers get (the Pod's name, as they are given now).
func podHostname(pod *corev1.Pod) string { return pod.Name }

// etcHosts renders the hosts file a kubelet gives every container of a Pod on the Pod network:
// localhost, the Pod's own hostname at its IP (so that software that resolves its own name,
// such as libvirt, never waits for DNS) and the Pod's hostAliases.
func etcHosts(pod *corev1.Pod, podIP string) []byte {
	var b strings.Builder
	b.WriteString("# Kubernetes-managed hosts file.\n")
	b.WriteString("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
	b.WriteString("fe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n")
	if podIP != "" {
		name := podHostname(pod)
		if pod.Spec.Hostname != "" && pod.Spec.Subdomain != "" {
			fmt.Fprintf(&b, "%s\t%s.%s.%s.svc.cluster.local\t%s\n", podIP, pod.Spec.Hostname, pod.Spec.Subdomain, pod.Namespace, name)
		} else {
			fmt.Fprintf(&b, "%s\t%s\n", podIP, name)
		}
	}
	for _, a := range pod.Spec.HostAliases {
		if len(a.Hostnames) > 0 {
			fmt.Fprintf(&b, "\n# Entries added by HostAliases.\n%s\t%s\n", a.IP, strings.Join(a.Hostnames, "\t"))
		}
	}
	return []byte(b.String())
}

// writeEtcHosts writes the Pod's hosts file once its IP is known.
func (w *podWorker) writeEtcHosts(pod *corev1.Pod, podIP string) error {
	tmp := filepath.Join(w.dir, etcHostsFile+".tmp")
	if err := os.WriteFile(tmp, etcHosts(pod, podIP), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(w.dir, etcHostsFile))
}

// etcHostsMount mounts the Pod's hosts file at /etc/hosts, unless the Pod uses the node's
// network or the container mounts something there itself.
func (w *podWorker) etcHostsMount(pod *corev1.Pod, c *corev1.Container) []container.Mount {
	if pod.Spec.HostNetwork {
		return nil
	}
	for _, m := range c.VolumeMounts {
		if filepath.Clean(m.MountPath) == "/etc/hosts" {
			return nil
		}
	}
	return []container.Mount{{Source: filepath.Join(w.dir, etcHostsFile), Target: "/etc/hosts", ReadOnly: true}}
}
