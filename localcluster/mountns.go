package localcluster

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/vireo-dev/vireo/localcluster/kubeletnode"
)

// mountNamespaceDir holds the files that keep the kubelet nodes' mount namespaces alive (as
// /run/netns keeps network namespaces); a private mount, so that a namespace file is never
// propagated into the namespace it holds.
const mountNamespaceDir = "/run/vireo-local-mnt"

// mountBind is a directory of the node's (on the host) that the node sees at a host path.
type mountBind struct {
	Source, Target string
}

// MountNamespace is the file holding local node name's mount namespace. A kubelet node's
// containerd and kubelet run in it: it is the host's (a slave: the host's mounts reach it, its
// own mounts stay in it), but for the node's own directories bound over the host paths that
// Vireo's manifests use as hostPath volumes (/var/run/vireo, /var/lib/vireo,
// /var/lib/vireo-apiserver) and over containerd's /run/containerd, the Pods' network
// namespaces in /run/netns, the kubelet's /var/log/containers and the kubelet's root
// /var/lib/kubelet (its device plugins' sockets, the Pods' volumes). So two nodes on one machine
// never share a hostPath, a socket or a Pod's mount; and when the namespace's last process
// ends, every mount the node made (secrets, the Pods' root filesystems) goes with it.
//
// The file's name carries a digest of the installation's root as well as the node's name, so
// that an installation never takes up another's namespace (two checkouts use the same node names).
func (c *Cluster) MountNamespace(name string) string {
	sum := sha256.Sum256([]byte(c.abs(c.opts.Root)))
	return filepath.Join(mountNamespaceDir, hex.EncodeToString(sum[:4])+"-"+name)
}

// nodeBinds are the directories of node name bound into its mount namespace.
func (c *Cluster) nodeBinds(name string) []mountBind {
	dir := c.abs(c.opts.NodeDir(name))
	host := filepath.Join(dir, "host")
	return []mountBind{
		{filepath.Join(host, "var", "run", "vireo"), "/run/vireo"},
		{filepath.Join(host, "var", "lib", "vireo"), "/var/lib/vireo"},
		{filepath.Join(host, "var", "lib", "vireo-apiserver"), "/var/lib/vireo-apiserver"},
		{filepath.Join(dir, "run-containerd"), "/run/containerd"},
		{filepath.Join(dir, "run-netns"), "/run/netns"},
		{filepath.Join(dir, "log-containers"), "/var/log/containers"},
		{filepath.Join(dir, "kubelet"), kubeletnode.KubeletRootInNode},
	}
}

// ensureMountNamespace creates node name's mount namespace with its binds, unless it exists.
func (c *Cluster) ensureMountNamespace(name string) error {
	if err := ensurePrivateDir(mountNamespaceDir); err != nil {
		return err
	}
	file := c.MountNamespace(name)
	if !isMountPoint(file) {
		if err := os.WriteFile(file, nil, 0o644); err != nil {
			return err
		}
		if err := run("unshare", "--mount="+file, "--propagation", "slave", "true"); err != nil {
			return fmt.Errorf("creating the mount namespace of node %s: %w", name, err)
		}
	}
	for _, b := range c.nodeBinds(name) {
		for _, d := range []string{b.Source, b.Target} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		// Already bound when the namespace sees Source's directory at Target. Whether Target is
		// a mount point says nothing: /run/netns is one on the host (iproute2 makes it one), so
		// a copy of the host's mounts has it too.
		if bound, err := boundInNamespace(file, b); err != nil {
			return fmt.Errorf("node %s: %w", name, err)
		} else if bound {
			continue
		}
		if err := run("nsenter", "--mount="+file, "mount", "--bind", b.Source, b.Target); err != nil {
			return fmt.Errorf("node %s: binding %s at %s: %w", name, b.Source, b.Target, err)
		}
	}
	return nil
}

// boundInNamespace reports whether the mount namespace file holds sees b.Source at b.Target
// (the same device and inode).
func boundInNamespace(file string, b mountBind) (bool, error) {
	var src syscall.Stat_t
	if err := syscall.Stat(b.Source, &src); err != nil {
		return false, err
	}
	out, err := exec.Command("nsenter", "--mount="+file, "stat", "-c", "%d:%i", b.Target).Output()
	if err != nil {
		return false, fmt.Errorf("stat %s in the node's mount namespace: %w", b.Target, err)
	}
	return strings.TrimSpace(string(out)) == fmt.Sprintf("%d:%d", src.Dev, src.Ino), nil
}

// removeMountNamespace releases node name's mount namespace (it ends once no process is left
// in it).
func (c *Cluster) removeMountNamespace(name string) error {
	file := c.MountNamespace(name)
	if isMountPoint(file) {
		if err := syscall.Unmount(file, syscall.MNT_DETACH); err != nil {
			return fmt.Errorf("unmounting %s: %w", file, err)
		}
	}
	if err := os.Remove(file); err != nil && !os.IsNotExist(err) {
		return err
	}
	// The last node's namespace gone, the private mount that held them goes too.
	if entries, err := os.ReadDir(mountNamespaceDir); err == nil && len(entries) == 0 && isMountPoint(mountNamespaceDir) {
		if err := syscall.Unmount(mountNamespaceDir, syscall.MNT_DETACH); err != nil {
			return fmt.Errorf("unmounting %s: %w", mountNamespaceDir, err)
		}
	}
	return nil
}

// processesInMountNamespace lists the processes whose mount namespace is the one file holds.
func processesInMountNamespace(file string) []int {
	want, err := nsInode(file)
	if err != nil {
		return nil
	}
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil || pid == os.Getpid() {
			continue
		}
		link, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", pid))
		if err == nil && link == fmt.Sprintf("mnt:[%d]", want) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// nsInode is the inode of the namespace a namespace file (a bind mount of nsfs) holds.
func nsInode(file string) (uint64, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(file, &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}

// ensurePrivateDir makes dir a mount of its own with private propagation.
func ensurePrivateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if !isMountPoint(dir) {
		if err := run("mount", "--bind", dir, dir); err != nil {
			return err
		}
	}
	return run("mount", "--make-private", dir)
}

// isMountPoint reports whether path is a mount point in this process's mount namespace.
func isMountPoint(path string) bool {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) > 4 && unescapeMountinfo(fields[4]) == path {
			return true
		}
	}
	return false
}

// unescapeMountinfo undoes mountinfo's octal escapes of space, tab, newline and backslash.
func unescapeMountinfo(s string) string {
	r := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)
	return r.Replace(s)
}
