package disks

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/launcher/domain"
)

// qemuImg runs qemu-img and fails the test on error.
func qemuImg(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("qemu-img", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("qemu-img %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// infoOf returns qemu-img's view of the image at path.
func infoOf(t *testing.T, path string) imageInfo {
	t.Helper()
	var info imageInfo
	if err := json.Unmarshal([]byte(qemuImg(t, "info", "--output=json", "-U", path)), &info); err != nil {
		t.Fatal(err)
	}
	return info
}

func TestEmptyDisk(t *testing.T) {
	needTools(t, "qemu-img")
	p := &Preparer{Dir: t.TempDir()}
	src, err := p.EmptyDisk(testContext(t), "scratch", resource.MustParse("1000M"))
	if err != nil {
		t.Fatal(err)
	}
	if src.Path != filepath.Join(p.Dir, "empty-disks", "scratch.qcow2") || src.Format != domain.FormatQCOW2 || src.ReadOnly {
		t.Errorf("DiskSource %+v", src)
	}
	info := infoOf(t, src.Path)
	if info.Format != "qcow2" || info.VirtualSize != 1000*1000*1000 {
		t.Errorf("image %+v, want a qcow2 of 1000M", info)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(src.Path, &st); err != nil {
		t.Fatal(err)
	}
	if used := st.Blocks * 512; used > 4<<20 {
		t.Errorf("the empty disk uses %d bytes; it should be sparse", used)
	}
	// A second call (a retried sync) reuses the image; another size is refused.
	if again, err := p.EmptyDisk(testContext(t), "scratch", resource.MustParse("1000M")); err != nil || again != src {
		t.Errorf("second call: %+v, %v", again, err)
	}
	if _, err := p.EmptyDisk(testContext(t), "scratch", resource.MustParse("2Gi")); err == nil || !strings.Contains(err.Error(), "not the image Vireo would create") {
		t.Errorf("a different size over an existing image: %v", err)
	}
	// Sizes are rounded up to whole sectors.
	odd, err := p.EmptyDisk(testContext(t), "odd", resource.MustParse("1001"))
	if err != nil {
		t.Fatal(err)
	}
	if size := infoOf(t, odd.Path).VirtualSize; size != 1024 {
		t.Errorf("1001 bytes became %d, want 1024", size)
	}
	if _, err := p.EmptyDisk(testContext(t), "zero", resource.MustParse("0")); err == nil {
		t.Error("a zero capacity was accepted")
	}
	if _, err := p.EmptyDisk(testContext(t), "Bad_Name", resource.MustParse("1Mi")); err == nil {
		t.Error("a volume name that is not a DNS label was accepted")
	}
}

// contents reads a file whole, to compare before and after.
func contents(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestContainerDiskOverlay: the overlay is a qcow2 over the image's disk (found under /disk/
// when the VMI names no path, its format read from its contents whatever its name), the guest's
// writes never reach the image, and preparing again reuses the overlay.
func TestContainerDiskOverlay(t *testing.T) {
	needTools(t, "qemu-img", "qemu-io")
	for _, c := range []struct{ name, format, rel, path string }{
		{"raw base named qcow2, under /disk/", "raw", "disk/disk.qcow2", ""},
		{"qcow2 base named img, at its path", "qcow2", "images/os/disk.img", "/images/os/disk.img"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir() // the image volume's mount
			base := filepath.Join(root, c.rel)
			if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
				t.Fatal(err)
			}
			qemuImg(t, "create", "-q", "-f", c.format, base, "8M")
			before := contents(t, base)
			p := &Preparer{Dir: t.TempDir()}
			src, err := p.ContainerDisk(testContext(t), "containerdisk", root, c.path)
			if err != nil {
				t.Fatal(err)
			}
			if src.Path != filepath.Join(p.Dir, "container-disks", "containerdisk.qcow2") || src.Format != domain.FormatQCOW2 {
				t.Errorf("DiskSource %+v", src)
			}
			info := infoOf(t, src.Path)
			if info.Format != "qcow2" || info.BackingFilename != base || info.VirtualSize != 8<<20 {
				t.Errorf("overlay %+v, want a qcow2 over %s of 8M", info, base)
			}
			out, err := exec.Command("qemu-io", "-f", "qcow2", "-c", "write -P 0xab 0 64k", src.Path).CombinedOutput()
			if err != nil {
				t.Fatalf("writing to the overlay: %v\n%s", err, out)
			}
			if !bytes.Equal(before, contents(t, base)) {
				t.Error("writing to the overlay changed the image's disk")
			}
			if again, err := p.ContainerDisk(testContext(t), "containerdisk", root, c.path); err != nil || again != src {
				t.Errorf("second call: %+v, %v", again, err)
			}
		})
	}
}

// TestContainerDiskRefuses: a symlink anywhere on the way to the disk, a disk with a backing
// file, a format QEMU should not open, a path that is a directory and an image without a disk
// are refused, each saying why.
func TestContainerDiskRefuses(t *testing.T) {
	needTools(t, "qemu-img")
	outside := filepath.Join(t.TempDir(), "node-file")
	qemuImg(t, "create", "-q", "-f", "raw", outside, "1M")
	root := t.TempDir()
	mkfile(t, root, "disk/.keep", "")
	if err := os.Symlink(outside, filepath.Join(root, "disk", "link.raw")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(outside), filepath.Join(root, "elsewhere")); err != nil {
		t.Fatal(err)
	}
	qemuImg(t, "create", "-q", "-f", "qcow2", "-b", outside, "-F", "raw", filepath.Join(root, "disk", "backed.qcow2"))
	qemuImg(t, "create", "-q", "-f", "vmdk", filepath.Join(root, "disk", "disk.vmdk"), "1M")
	p := &Preparer{Dir: t.TempDir()}
	for path, want := range map[string]string{
		"/disk/link.raw":       "symlink",
		"/elsewhere/node-file": "symlink",
		"/disk/backed.qcow2":   "backing file",
		"/disk/disk.vmdk":      "vmdk image",
		"/disk":                "not a regular file",
		"/disk/missing":        "no such file",
		"/":                    "names no file",
	} {
		_, err := p.ContainerDisk(testContext(t), "containerdisk", root, path)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("path %s: %v, want %q", path, err, want)
		}
	}
	empty := t.TempDir()
	if _, err := p.ContainerDisk(testContext(t), "containerdisk", empty, ""); err == nil || !strings.Contains(err.Error(), "no /disk/ directory") {
		t.Errorf("image without /disk/: %v", err)
	}
	mkfile(t, empty, "disk/sub/.keep", "")
	if _, err := p.ContainerDisk(testContext(t), "containerdisk", empty, ""); err == nil || !strings.Contains(err.Error(), "holds no regular file") {
		t.Errorf("image with an empty /disk/: %v", err)
	}
	linked := t.TempDir()
	if err := os.Symlink(filepath.Join(root, "disk"), filepath.Join(linked, "disk")); err != nil {
		t.Fatal(err)
	}
	if _, err := p.ContainerDisk(testContext(t), "containerdisk", linked, ""); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("image whose /disk is a symlink: %v", err)
	}
}

func TestPersistentVolume(t *testing.T) {
	needTools(t, "qemu-img")
	p := &Preparer{Dir: t.TempDir()}
	raw := t.TempDir()
	qemuImg(t, "create", "-q", "-f", "raw", filepath.Join(raw, PVCImageName), "4M")
	src, err := p.PersistentVolume(testContext(t), raw, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	if src.Path != HeldFilesDir()+"/1000" || src.Format != domain.FormatRaw || !src.ReadOnly {
		t.Errorf("DiskSource %+v", src)
	}
	// What the domain opens is the file checked, whatever the claim's directory holds later.
	checked, err := os.Stat(filepath.Join(raw, PVCImageName))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(raw, PVCImageName), filepath.Join(raw, "moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(raw, PVCImageName)); err != nil {
		t.Fatal(err)
	}
	if opened, err := os.Stat(src.Path); err != nil || !os.SameFile(checked, opened) {
		t.Errorf("%s opens %v (%v), not the disk.img checked", src.Path, opened, err)
	}
	if err := os.Remove(filepath.Join(raw, PVCImageName)); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(raw, "moved"), filepath.Join(raw, PVCImageName)); err != nil {
		t.Fatal(err)
	}
	qcow := t.TempDir()
	qemuImg(t, "create", "-q", "-f", "qcow2", filepath.Join(qcow, PVCImageName), "4M")
	if src, err := p.PersistentVolume(testContext(t), qcow, false, 1); err != nil || src.Format != domain.FormatQCOW2 {
		t.Errorf("qcow2 disk.img: %+v, %v", src, err)
	}
	link := t.TempDir()
	if err := os.Symlink(filepath.Join(raw, PVCImageName), filepath.Join(link, PVCImageName)); err != nil {
		t.Fatal(err)
	}
	if _, err := p.PersistentVolume(testContext(t), link, false, 2); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("a symlinked disk.img: %v", err)
	}
	backed := t.TempDir()
	qemuImg(t, "create", "-q", "-f", "qcow2", "-b", filepath.Join(raw, PVCImageName), "-F", "raw", filepath.Join(backed, PVCImageName))
	if _, err := p.PersistentVolume(testContext(t), backed, false, 3); err == nil || !strings.Contains(err.Error(), "backing file") {
		t.Errorf("a disk.img with a backing file: %v", err)
	}
	if _, err := p.PersistentVolume(testContext(t), t.TempDir(), false, 4); err == nil {
		t.Error("a claim without disk.img was accepted")
	}
}

// TestPrepareVolumesThenBuild prepares every kind of volume of a VMI and builds its domain
// from the result, as the launcher does.
func TestPrepareVolumesThenBuild(t *testing.T) {
	needTools(t, "qemu-img", "genisoimage")
	images, claims := t.TempDir(), t.TempDir()
	mkfile(t, images, "os/disk/.keep", "")
	qemuImg(t, "create", "-q", "-f", "qcow2", filepath.Join(images, "os", "disk", "os.qcow2"), "8M")
	mkfile(t, claims, "data/.keep", "")
	qemuImg(t, "create", "-q", "-f", "raw", filepath.Join(claims, "data", PVCImageName), "8M")
	vmi := &v1.VirtualMachineInstance{}
	vmi.Name, vmi.Namespace, vmi.UID = "prep", "default", "4f2a6c8e-0b1d-4e3f-9a5b-7c9d1e3f5a7b"
	vmi.Spec.Domain.Memory = &v1.Memory{Guest: ptr.To(resource.MustParse("64Mi"))}
	vmi.Spec.Volumes = []v1.Volume{
		{Name: "os", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "r/os:1"}}},
		{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data", ReadOnly: true}}},
		{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDisk: &v1.EmptyDiskSource{Capacity: resource.MustParse("16Mi")}}},
		{Name: "cloudinit", VolumeSource: v1.VolumeSource{CloudInitNoCloud: &v1.CloudInitNoCloudSource{UserDataSecretRef: &v1.LocalObjectReference{Name: "ud"}}}},
	}
	for _, vol := range vmi.Spec.Volumes {
		vmi.Spec.Domain.Devices.Disks = append(vmi.Spec.Domain.Devices.Disks,
			v1.Disk{Name: vol.Name, DiskDevice: v1.DiskDevice{Disk: &v1.DiskTarget{Bus: v1.DiskBusVirtio}}})
	}
	p := &Preparer{Dir: t.TempDir()}
	node := NodeVolumes{
		ContainerDisksDir: images,
		ClaimsDir:         claims,
		CloudInitSecrets:  map[string]ResolvedSecrets{"cloudinit": {UserData: []byte("#cloud-config\n")}},
	}
	sources, err := p.PrepareVolumes(testContext(t), vmi, node)
	if err != nil {
		t.Fatal(err)
	}
	if len(sources) != 4 || !sources["data"].ReadOnly {
		t.Errorf("sources %+v", sources)
	}
	d, err := domain.Build(vmi, domain.Inputs{
		Emulation: domain.EmulationTCG, ConsoleSocket: "/run/c.sock", VNCSocket: "/run/v.sock", AgentSocket: "/run/a.sock", Disks: sources,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Devices.Disks) != 4 {
		t.Errorf("%d disks in the domain, want 4", len(d.Devices.Disks))
	}

	// Every failure is reported, each naming its volume.
	node.ContainerDisksDir = t.TempDir()
	delete(node.CloudInitSecrets, "cloudinit")
	_, err = p.PrepareVolumes(testContext(t), vmi, node)
	for _, want := range []string{`spec.volumes[0] ("os")`, `spec.volumes[3] ("cloudinit")`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not name %s", err, want)
		}
	}
}
