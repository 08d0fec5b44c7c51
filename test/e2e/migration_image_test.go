package e2e

import (
	"archive/tar"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	crv1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/launcherpodapi"
	"github.com/vireo-dev/vireo/test/images"
)

// movedBlockSize is the size of the block the moved image changes, and the guest reads.
const movedBlockSize = 4096

// TestMigrationKeepsTheImageItRunsOn: a containerDisk guest whose image tag moved after it
// started migrates onto the image it runs on, not onto what the tag names now: the target Pod
// mounts the digest the kubelet reported for the source's image volume, and a block of the disk
// that the new image changed and the guest never wrote reads the same in the guest after the
// migration as before. Copied onto the new image, the guest's overlay would read the new
// image's block there. The namespace enforces Pod Security baseline, which the target
// launcher Pod passes as the source's does; the VMI's volumeStatus names the digest.
func TestMigrationKeepsTheImageItRunsOn(t *testing.T) {
	t.Parallel()
	ns := baselineNamespace(t)
	moving := cluster.RegistryAddress() + "/vireo/e2e-moving-" + ns + ":latest"
	ref, err := name.ParseReference(moving, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	tiny, err := name.ParseReference(cluster.ContainerDiskImage("tiny"), name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(tiny)
	if err != nil {
		t.Fatalf("reading %s: %v", tiny, err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatalf("pushing %s: %v", ref, err)
	}
	disk := filepath.Join(t.TempDir(), "disk.qcow2")
	if err := extractContainerDisk(img, disk); err != nil {
		t.Fatal(err)
	}
	block := lastBlock(t, disk)

	applyExample(t, ns, "vmi-tiny.yaml", func(m string) string {
		return strings.Replace(m, cluster.ContainerDiskImage("tiny"), moving, 1)
	})
	con := openConsole(t, ns, "tiny")
	con.waitFor(t, guestMarker, 90*time.Second)
	before := readGuestBlock(t, con, "BEFORE", block)

	// The tag moves: the same disk with the block overwritten.
	if out, err := exec.Command("qemu-io", "-f", "qcow2", "-c", fmt.Sprintf("write -P 0xab %d %d", block*movedBlockSize, movedBlockSize), disk).CombinedOutput(); err != nil {
		t.Fatalf("qemu-io: %v\n%s", err, out)
	}
	changed := md5.Sum([]byte(strings.Repeat("\xab", movedBlockSize)))
	if before == hex.EncodeToString(changed[:]) {
		t.Fatalf("the block already reads as the moved image's; the test cannot tell them apart")
	}
	moved, err := images.ContainerDiskImage(disk, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, moved); err != nil {
		t.Fatalf("pushing the moved %s: %v", ref, err)
	}
	runsOn, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}

	m := startMigration(t, ns, "tiny", "")
	m = waitMigration(t, ns, m.Name, v1.MigrationSucceeded, 3*time.Minute)
	target := m.Status.MigrationState.TargetNode
	vmi := waitVMI(t, ns, "tiny", time.Minute, "running on the target", func(v *v1.VirtualMachineInstance) bool {
		return v.Status.Phase == v1.Running && v.Status.NodeName == target && len(v.Status.ActivePods) == 1
	})
	pod, err := kube.CoreV1().Pods(ns).Get(t.Context(), m.Status.MigrationState.TargetPod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSuffix(moving, ":latest") + "@" + runsOn.String()
	for _, v := range pod.Spec.Volumes {
		if v.Name == launcherpodapi.ContainerDiskVolumeName("containerdisk") && (v.Image == nil || v.Image.Reference != want) {
			t.Errorf("the target Pod's containerDisk volume %+v, want the image volume of %s", v.VolumeSource, want)
		}
	}
	if vs := vmi.Status.VolumeStatus; len(vs) != 1 || vs[0].ContainerDiskVolume == nil || vs[0].ContainerDiskVolume.ImageID != want {
		t.Errorf("the VMI's volumeStatus after the migration is %+v, want containerdisk at %s", vs, want)
	}
	after := readGuestBlock(t, openConsoleIn(t, launcherDir(vmi)), "AFTER", block)
	if after != before {
		t.Errorf("block %d of the guest's disk read %s before the migration and %s after (the moved image's: %x)", block, before, after, changed)
	}
}

// extractContainerDisk writes the disk of containerDisk img to path.
func extractContainerDisk(img crv1.Image, path string) error {
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		return fmt.Errorf("the containerDisk has %d layers (%v), want 1", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		return err
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if err != nil {
			return fmt.Errorf("no %s in the containerDisk: %w", images.ContainerDiskPath, err)
		}
		if hdr.Name != images.ContainerDiskPath {
			continue
		}
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, tr); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
}

// lastBlock is the index of a movedBlockSize block near the end of the qcow2 disk.
func lastBlock(t *testing.T, disk string) int64 {
	t.Helper()
	out, err := exec.Command("qemu-img", "info", "--output=json", disk).Output()
	if err != nil {
		t.Fatalf("qemu-img info %s: %v", disk, err)
	}
	var info struct {
		VirtualSize int64 `json:"virtual-size"`
	}
	if err := json.Unmarshal(out, &info); err != nil || info.VirtualSize < 2*movedBlockSize {
		t.Fatalf("qemu-img info %s: %s (%v)", disk, out, err)
	}
	return info.VirtualSize/movedBlockSize - 2
}

// readGuestBlock has the guest read block of its disk past its page cache and returns the
// block's MD5, which the guest prints after label.
func readGuestBlock(t *testing.T, con *console, label string, block int64) string {
	t.Helper()
	con.send(t, fmt.Sprintf(`sync; echo 3 > /proc/sys/vm/drop_caches; echo "%s=$(dd if=/dev/vda bs=%d skip=%d count=1 2>/dev/null | md5sum)"`,
		label, movedBlockSize, block))
	re := regexp.MustCompile(label + `=([0-9a-f]{32})`)
	var sum string
	eventuallyWithin(t, "the guest prints the block's MD5 after "+label, 30*time.Second, func() error {
		m := re.FindStringSubmatch(con.output())
		if m == nil {
			return errors.New("not yet")
		}
		sum = m[1]
		return nil
	})
	return sum
}
