package launcher

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"
	"sigs.k8s.io/yaml"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/launcher/disks"
	"github.com/vireo-dev/vireo/launcher/domain"
	"github.com/vireo-dev/vireo/launcher/protocol"
)

// fuzzVMIUID is the VMI of the fuzzed launcher.
const fuzzVMIUID = "7b0e5a61-fuzz-4e5f-8a9b-0c1d2e3f4a5b"

// FuzzSyncRequest feeds arbitrary Sync requests, as the protocol's JSON codec decodes them, to
// what the launcher does with one before libvirt: the check that the VMI is its own, the
// preparation of the volumes (on a node layout of image, claim and kernel mounts that holds
// symlinks out of them, with qemu-img and genisoimage absent, so every volume stops at the
// tool or before), the kernelBoot files, and the domain's XML and interfaces from the disks
// (as FuzzBuild gives them). The request's VMI is the user's (the API server's validation is
// not relied upon), so:
//   - a request for another VMI, or none, is refused with a message;
//   - the preparation fails naming every volume, changes nothing outside its own directory and
//     leaves no file in it;
//   - kernelBoot files are regular files inside the image's mount, reached without a symlink;
//   - an accepted domain is XML whose every absolute path is one the launcher gave it (a disk,
//     a socket, the kernel, the emulator, the RNG's source), with an interface for each of the
//     VMI's, each with a 48-bit MAC and the Pod's address; a refused one says why.
func FuzzSyncRequest(f *testing.F) {
	for _, seed := range syncSeeds(f) {
		f.Add(seed)
	}
	fx := newPrepareFixture(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		var req protocol.SyncRequest
		if json.Unmarshal(data, &req) != nil {
			return
		}
		l := &launcher{opts: &Options{UID: fuzzVMIUID, PodIP: "10.244.1.7", PrivateDir: protocol.PrivateDir, TCGCacheMiB: 16},
			dir: protocol.LauncherDir, emulation: domain.EmulationTCG}
		if err := l.checkSync(&req); err != nil {
			if (req.VMI != nil && string(req.VMI.UID) == fuzzVMIUID) || err.Error() == "" {
				t.Fatalf("the request for this launcher's VMI was refused: %q", err)
			}
			return
		}
		vmi := req.VMI
		fx.checkPrepare(t, vmi)
		in := l.domainInputs(fabricatedDisks(vmi), fx.checkKernelBoot(t, vmi))
		out, ifaces, err := buildDomain(vmi, in, l.opts.PodIP)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("the domain was refused without a message")
			}
			return
		}
		checkDomainXML(t, out, in)
		checkInterfaces(t, vmi, ifaces, l.opts.PodIP)
	})
}

// syncSeeds are Sync requests of the domain package's golden VMIs (made this launcher's), and
// a few refused or hostile ones.
func syncSeeds(f *testing.F) [][]byte {
	var seeds [][]byte
	add := func(req any) {
		b, err := json.Marshal(req)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	golden, _ := filepath.Glob("domain/testdata/*.yaml")
	for _, path := range golden {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		vmi := &v1.VirtualMachineInstance{}
		if err := yaml.Unmarshal(b, vmi); err != nil {
			f.Fatal(err)
		}
		vmi.UID = fuzzVMIUID
		add(protocol.SyncRequest{VMI: vmi})
	}
	for _, s := range []string{
		`{}`, `{"vmi":null}`, `{"vmi":{"metadata":{"uid":"another"}}}`,
		`{"vmi":{"metadata":{"uid":"` + fuzzVMIUID + `"},"spec":{"domain":{"devices":{"disks":[{"name":"boot"}]}},"volumes":[` +
			`{"name":"boot","containerDisk":{"image":"x","path":"../../escape/etc/shadow"}},{"name":"data","persistentVolumeClaim":{"claimName":"d"}},` +
			`{"name":"../up","emptyDisk":{"capacity":"1Gi"}},{"name":"h","hostDisk":{"path":"/etc"}},{"name":"none"}]}}}`,
		`{"vmi":{"metadata":{"uid":"` + fuzzVMIUID + `"},"spec":{"domain":{"firmware":{"kernelBoot":{"container":{"image":"k",` +
			`"kernelPath":"/boot/link","initrdPath":"/escape/etc/passwd"}}},"devices":{"interfaces":[{"name":"default","macAddress":"01:00:5e:00:00:fb","masquerade":{}}]}},` +
			`"networks":[{"name":"default","pod":{}}]}}}`,
	} {
		seeds = append(seeds, []byte(s))
	}
	return seeds
}

// prepareFixture is a node layout for the preparation of volumes: the mounts of containerDisk
// images, claims, Secrets, config volumes and the kernelBoot image, some holding symlinks out
// of them, and the launcher's own directory.
type prepareFixture struct {
	root, prep string
	nodes      disks.NodeVolumes
	kernelRoot string
	before     []string // the layout outside prep, as snapshot describes it
}

func newPrepareFixture(f *testing.F) *prepareFixture {
	root, err := os.MkdirTemp("", "launcher-fuzz")
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { os.RemoveAll(root) })
	fx := &prepareFixture{root: root, prep: filepath.Join(root, "prep"), kernelRoot: filepath.Join(root, "kernel")}
	fx.nodes = disks.NodeVolumes{ContainerDisksDir: filepath.Join(root, "images"), ClaimsDir: filepath.Join(root, "claims"),
		SecretsDir: filepath.Join(root, "secrets"), ConfigVolumesDir: filepath.Join(root, "config"), AccessCredentialsDir: filepath.Join(root, "credentials")}
	files := map[string]string{
		"images/containerdisk/disk/disk.qcow2": "QFI\xfb", "images/boot/disk/a.img": "raw", "claims/rootdisk/disk.img": "raw",
		"claims/installer/disk.img": "raw", "secrets/cloudinitdisk/userdata/userdata": "#cloud-config\n",
		"config/cfg/..data/key": "value", "kernel/boot/vmlinuz": "kernel", "kernel/boot/initrd.img": "initrd", "prep/.keep": "",
	}
	links := map[string]string{
		"images/boot/escape": "/", "images/linked/disk/x": "/etc/passwd", "claims/data/disk.img": "/etc/shadow",
		"config/cfg/key": "..data/key", "kernel/boot/link": "/etc/hostname", "kernel/escape": "..",
	}
	for name, content := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			f.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	for name, target := range links {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			f.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			f.Fatal(err)
		}
	}
	os.Remove(filepath.Join(fx.prep, ".keep"))
	fx.before = fx.snapshot(f)
	return fx
}

// snapshot describes the layout outside prep: each entry's path, type, size and link target.
func (fx *prepareFixture) snapshot(tb testing.TB) []string {
	var out []string
	err := filepath.WalkDir(fx.root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path == fx.prep {
			return filepath.SkipDir
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		target, _ := os.Readlink(path)
		out = append(out, fmt.Sprintf("%s %v %d %s", path, info.Mode(), info.Size(), target))
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// checkPrepare prepares vmi's volumes on the fixture, without the tools, and checks the outcome.
func (fx *prepareFixture) checkPrepare(t *testing.T, vmi *v1.VirtualMachineInstance) {
	p := disks.Preparer{Dir: fx.prep, QEMUImg: "vireo-fuzz-absent-qemu-img", GenISOImage: "vireo-fuzz-absent-genisoimage"}
	got, err := p.PrepareVolumes(context.Background(), vmi, fx.nodes)
	switch {
	case err == nil && len(vmi.Spec.Volumes) > 0:
		t.Fatalf("without qemu-img and genisoimage, the volumes were prepared: %v", got)
	case err != nil:
		for i := range vmi.Spec.Volumes {
			if !strings.Contains(err.Error(), fmt.Sprintf("spec.volumes[%d] ", i)) {
				t.Fatalf("the preparation's error does not name spec.volumes[%d]: %v", i, err)
			}
		}
	}
	if after := fx.snapshot(t); !slices.Equal(after, fx.before) {
		t.Fatalf("the preparation changed the node's mounts:\n%s\nwas\n%s", strings.Join(after, "\n"), strings.Join(fx.before, "\n"))
	}
	err = filepath.WalkDir(fx.prep, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			return fmt.Errorf("a failed preparation left %s", path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// checkKernelBoot checks the kernelBoot files of vmi in the fixture's image and returns them
// (nil when refused, or without kernelBoot).
func (fx *prepareFixture) checkKernelBoot(t *testing.T, vmi *v1.VirtualMachineInstance) *domain.KernelBootFiles {
	fw := vmi.Spec.Domain.Firmware
	if fw == nil || fw.KernelBoot == nil || fw.KernelBoot.Container == nil {
		return nil
	}
	c := fw.KernelBoot.Container
	files, err := disks.KernelBoot(fx.kernelRoot, c)
	if err != nil {
		if err.Error() == "" {
			t.Fatal("kernelBoot refused without a message")
		}
		return nil
	}
	for _, f := range []struct{ asked, got string }{{c.KernelPath, files.Kernel}, {c.InitrdPath, files.Initrd}} {
		if (f.asked == "") != (f.got == "") {
			t.Fatalf("kernelBoot path %q gave %q", f.asked, f.got)
		}
		if f.got == "" {
			continue
		}
		rel, err := filepath.Rel(fx.kernelRoot, f.got)
		info, lerr := os.Lstat(f.got)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") || lerr != nil || !info.Mode().IsRegular() {
			t.Fatalf("kernelBoot path %q gave %q, not a regular file in the image %s", f.asked, f.got, fx.kernelRoot)
		}
		// No component on the way is a symlink either.
		for dir := filepath.Dir(f.got); dir != fx.kernelRoot; dir = filepath.Dir(dir) {
			if info, err := os.Lstat(dir); err != nil || !info.IsDir() {
				t.Fatalf("kernelBoot path %q gave %q, reached through %s", f.asked, f.got, dir)
			}
		}
	}
	return files
}

// fabricatedDisks are prepared disks for every volume of vmi, as FuzzBuild gives them.
func fabricatedDisks(vmi *v1.VirtualMachineInstance) map[string]domain.DiskSource {
	out := map[string]domain.DiskSource{}
	for i, vol := range vmi.Spec.Volumes {
		src := domain.DiskSource{Path: fmt.Sprintf("/var/run/vireo-private/disks/volume-%d", i), Format: []string{domain.FormatRaw, domain.FormatQCOW2}[i%2],
			DirectIO: i%4 != 1}
		if i%3 == 0 {
			src.Path, src.Block = fmt.Sprintf("/dev/vireo/volume-%d", i), true
		}
		out[vol.Name] = src
	}
	return out
}

// checkDomainXML checks that out is the XML of a domain whose every absolute path (in an
// attribute or text, but the kernel's command line, which is the guest's) is one in gave it.
func checkDomainXML(t *testing.T, out string, in domain.Inputs) {
	var dom libvirtxml.Domain
	if err := dom.Unmarshal(out); err != nil || dom.Name == "" {
		t.Fatalf("the domain's XML does not read back (%v):\n%s", err, out)
	}
	allowed := []string{in.ConsoleSocket, in.VNCSocket, in.AgentSocket, "/usr/bin/qemu-system-x86_64", "/dev/urandom"}
	for _, d := range in.Disks {
		allowed = append(allowed, d.Path)
	}
	if in.KernelBoot != nil {
		allowed = append(allowed, in.KernelBoot.Kernel, in.KernelBoot.Initrd)
	}
	dec := xml.NewDecoder(strings.NewReader(out))
	var stack []string
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("the domain's XML: %v", err)
		}
		var values []string
		switch tok := tok.(type) {
		case xml.StartElement:
			stack = append(stack, tok.Name.Local)
			for _, a := range tok.Attr {
				values = append(values, a.Value)
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 && stack[len(stack)-1] != "cmdline" {
				values = append(values, string(bytes.TrimSpace(tok)))
			}
		}
		for _, v := range values {
			if strings.HasPrefix(v, "/") && !slices.Contains(allowed, v) {
				t.Fatalf("the domain refers to %s (in <%s>), which the launcher did not give it", v, strings.Join(stack, "><"))
			}
		}
	}
}

// checkInterfaces checks the status's interfaces of vmi's domain.
func checkInterfaces(t *testing.T, vmi *v1.VirtualMachineInstance, ifaces []protocol.Interface, podIP string) {
	spec := vmi.Spec.Domain.Devices.Interfaces
	if len(ifaces) != len(spec) {
		t.Fatalf("%d interfaces reported for %d in the VMI", len(ifaces), len(spec))
	}
	for i, iface := range ifaces {
		mac, err := net.ParseMAC(iface.MAC)
		if iface.Name != spec[i].Name || err != nil || len(mac) != 6 || !slices.Equal(iface.IPs, []string{podIP}) {
			t.Fatalf("interface %d reported as %+v for %+v", i, iface, spec[i])
		}
	}
}
