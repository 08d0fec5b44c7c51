package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// smallVolume is a tmpfs of a chosen size mounted in a local node's mount namespace (where its
// kubelet and containers see it, the host does not), offered as a PersistentVolume of
// StorageClass class that claims much more than it holds: a disk that fills up.
type smallVolume struct {
	node, dir, class string
}

// newSmallVolume mounts a tmpfs of size on node and makes the PersistentVolume of it, claiming
// capacity (more than a DataVolume's size: its claim adds the filesystem's overhead); both go
// when the test ends.
func newSmallVolume(t *testing.T, ns, node, size, capacity string) *smallVolume {
	t.Helper()
	v := &smallVolume{node: node, dir: filepath.Join(os.TempDir(), "vireo-e2e-small-"+ns), class: "small-" + ns}
	if err := os.MkdirAll(v.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = v.nsenter("umount", v.dir)
		_ = os.Remove(v.dir)
	})
	if err := v.nsenter("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0777", "tmpfs", v.dir); err != nil {
		t.Fatal(err)
	}
	pv := fmt.Sprintf(`apiVersion: v1
kind: PersistentVolume
metadata: {name: %[1]s}
spec:
  storageClassName: %[1]s
  capacity: {storage: %[2]s}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  hostPath: {path: %[3]s}
  nodeAffinity:
    required:
      nodeSelectorTerms:
        - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [%[4]s]}]
`, v.class, capacity, v.dir, node)
	t.Cleanup(func() { _, _, _ = kubectlResult("delete", "pv", v.class, "--wait=false") })
	kubectl(t, "apply", "-f", manifestFile(t, pv))
	return v
}

// nsenter runs a command in the node's mount namespace.
func (v *smallVolume) nsenter(args ...string) error {
	cmd := exec.Command("nsenter", append([]string{"--mount=" + cluster.MountNamespace(v.node), "--"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("nsenter %s on %s: %v: %s", strings.Join(args, " "), v.node, err, out)
	}
	return nil
}

// resize gives the tmpfs a new size, keeping what it holds.
func (v *smallVolume) resize(t *testing.T, size string) {
	t.Helper()
	if err := v.nsenter("mount", "-o", "remount,size="+size, v.dir); err != nil {
		t.Fatal(err)
	}
}

// sha256Prefix is the sha256 of the first n bytes of file in the volume.
func (v *smallVolume) sha256Prefix(t *testing.T, file string, n int) string {
	t.Helper()
	cmd := exec.Command("nsenter", "--mount="+cluster.MountNamespace(v.node), "--", "head", "-c", fmt.Sprint(n), filepath.Join(v.dir, file))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reading %s on %s: %v", file, v.node, err)
	}
	sum := sha256.Sum256(out)
	return hex.EncodeToString(sum[:])
}

// TestImportDiskFull: a DataVolume imports onto a volume that fills up halfway (an 8 MiB
// filesystem offered as 128 MiB). The import fails saying the device has no space left and is
// retried; once the filesystem grows, it succeeds with exactly the image.
func TestImportDiskFull(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	node := cluster.NodeNames()[0]
	vol := newSmallVolume(t, ns, node, "8m", "128Mi")
	disk := tinyDisk(t, "disk.raw")
	sum := sha256.Sum256(disk)
	checksum := hex.EncodeToString(sum[:])
	srv := serveImages(t, map[string][]byte{"disk.raw": disk})
	manifest := fmt.Sprintf(`apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata: {name: full}
spec:
  source:
    http: {url: %s/disk.raw, checksum: "sha256:%s"}
  storage:
    storageClassName: %s
    resources: {requests: {storage: 64Mi}}
`, srv.base, checksum, vol.class)
	kubectl(t, "-n", ns, "apply", "-f", manifestFile(t, manifest))

	var reason string
	eventuallyWithin(t, "the import fails for want of space", 2*time.Minute, func() error {
		dv, err := vireo.CdiV1beta1().DataVolumes(ns).Get(t.Context(), "full", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if dv.Status.Phase == cdiv1beta1.Succeeded || dv.Status.Phase == cdiv1beta1.Failed {
			t.Fatalf("the import ended %s on a full disk: %+v", dv.Status.Phase, dv.Status.Conditions)
		}
		for _, c := range dv.Status.Conditions {
			if c.Type == cdiv1beta1.DataVolumeRunning && strings.Contains(c.Message, "no space left on device") {
				reason = c.Message
				return nil
			}
		}
		return fmt.Errorf("phase %s, conditions %+v", dv.Status.Phase, dv.Status.Conditions)
	})
	t.Logf("the full disk, as the DataVolume says it: %s", reason)

	vol.resize(t, "80m")
	start := time.Now()
	dv := waitDataVolume(t, ns, "full", cdiv1beta1.Succeeded, 3*time.Minute)
	t.Logf("imported %s after the disk grew (%d restarts)", time.Since(start).Round(time.Second), dv.Status.RestartCount)
	if got := vol.sha256Prefix(t, "disk.img", len(disk)); got != checksum {
		t.Errorf("disk.img holds %s, want the image's %s", got, checksum)
	}
}

// TestGuestWriteDiskFull: a guest whose disk is a volume that fills up (a 24 MiB filesystem
// under a 64 MiB disk) writes past what it holds: the guest is paused, its VMI saying an I/O
// error paused it, nothing is lost; once the volume grows and the VMI is unpaused, the write
// completes and the guest goes on.
func TestGuestWriteDiskFull(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	node := cluster.NodeNames()[0]
	vol := newSmallVolume(t, ns, node, "24m", "128Mi")
	disk := tinyDisk(t, "disk.raw")
	srv := serveImages(t, map[string][]byte{"disk.raw": disk})
	kubectl(t, "-n", ns, "apply", "-f", manifestFile(t, fmt.Sprintf(`apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata: {name: root}
spec:
  source:
    http: {url: %s/disk.raw}
  storage:
    storageClassName: %s
    resources: {requests: {storage: 64Mi}}
---
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: writer}
spec:
  terminationGracePeriodSeconds: 0
  domain:
    memory: {guest: 128Mi}
    devices:
      disks:
        - name: root
          disk: {bus: virtio}
  volumes:
    - name: root
      dataVolume: {name: root}
`, srv.base, vol.class)))
	waitPhase(t, ns, "writer", v1.Running, 3*time.Minute)
	con := openConsoleRetrying(t, ns, "writer")
	echo42(t, con)
	// 16 MiB of random data past the image (18 MiB at the disk's start): more than the
	// filesystem under it has left.
	con.send(t, "dd if=/dev/urandom of=/dev/vda bs=1M seek=40 count=16 conv=fsync && echo WROTE-$((20+1))")
	vmi := waitVMI(t, ns, "writer", 2*time.Minute, "paused by an I/O error", func(v *v1.VirtualMachineInstance) bool {
		c := conditionOf(v, v1.VirtualMachineInstancePaused)
		return c != nil && c.Reason == "PausedIOError"
	})
	t.Logf("the guest's disk full: %+v", conditionOf(vmi, v1.VirtualMachineInstancePaused))

	vol.resize(t, "80m")
	if out, err := vireoctl(t, "-n", ns, "unpause", "vmi", "writer"); err != nil {
		t.Fatalf("vireoctl unpause vmi writer: %v\n%s", err, out)
	}
	waitVMI(t, ns, "writer", time.Minute, "unpaused", func(v *v1.VirtualMachineInstance) bool {
		return v.Status.Phase == v1.Running && conditionOf(v, v1.VirtualMachineInstancePaused) == nil
	})
	con.waitFor(t, "WROTE-21", 2*time.Minute)
}
