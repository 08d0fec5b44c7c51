package domain

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// update rewrites the golden files: go test ./launcher/domain -run TestGolden -update
var update = flag.Bool("update", false, "rewrite testdata/*.xml from the current output")

// vmiDir is where the golden cases pretend the launcher keeps a VMI's files.
const vmiDir = "/var/run/vireo/pods/7b0e5a61-2c3d-4e5f-8a9b-0c1d2e3f4a5b"

// claimsDir is where the golden cases pretend claims are mounted (KubeVirt's path).
const claimsDir = "/var/run/kubevirt-private/vmi-disks"

// kernelBootDir is where the node agent extracts a kernelBoot image's files in the node's image
// cache (files named after the SHA-256 of their path in the image).
const kernelBootDir = "/var/lib/vireo/images/sha256-2b7e151628aed2a6abf7158809cf4f3c762e7160f38b4da56a784d9045190cfe/kernelboot"

// goldenCase is a VMI in testdata/<name>.yaml built with in; its domain is testdata/<name>.xml.
type goldenCase struct {
	name string
	in   Inputs
}

// goldenCases are the golden cases; each covers a family of device classes.
func goldenCases(t *testing.T) []goldenCase {
	help, err := os.ReadFile(filepath.Join("testdata", "machine-help.txt"))
	if err != nil {
		t.Fatal(err)
	}
	machines := ParseMachineHelp(string(help))
	sockets := func(in Inputs) Inputs {
		in.ConsoleSocket, in.VNCSocket, in.AgentSocket = vmiDir+"/console.sock", vmiDir+"/vnc.sock", vmiDir+"/private/agent.sock"
		return in
	}
	return []goldenCase{
		{name: "tiny", in: sockets(Inputs{
			Emulation: EmulationTCG, TCGCacheMiB: 32, MachineTypes: machines,
			Disks: map[string]DiskSource{
				"containerdisk": {Path: vmiDir + "/container-disks/containerdisk.qcow2", Format: FormatQCOW2, DirectIO: true},
			},
		})},
		{name: "kernelboot", in: sockets(Inputs{
			Emulation: EmulationTCG, MachineTypes: machines,
			KernelBoot: &KernelBootFiles{Kernel: kernelBootDir + "/0c8d3b1b7e1a6f0e2f9d4c5b6a7980716253443526170819a0b1c2d3e4f5a6b7",
				Initrd: kernelBootDir + "/5f4e3d2c1b0a99887766554433221100ffeeddccbbaa99887766554433221100"},
		})},
		{name: "storage", in: sockets(Inputs{
			Emulation: EmulationTCG, MachineTypes: machines,
			Disks: map[string]DiskSource{
				"rootdisk":      {Path: claimsDir + "/rootdisk/disk.img", Format: FormatRaw, DirectIO: true},
				"data":          {Path: claimsDir + "/data/disk.img", Format: FormatQCOW2},
				"scratch":       {Path: vmiDir + "/empty-disks/scratch.qcow2", Format: FormatQCOW2},
				"installer":     {Path: claimsDir + "/installer/disk.img", Format: FormatRaw, ReadOnly: true},
				"cloudinitdisk": {Path: vmiDir + "/cloud-init/cloudinitdisk.iso", Format: FormatRaw},
			},
		})},
		{name: "devices", in: sockets(Inputs{
			Emulation: EmulationKVM, TCGCacheMiB: 32, MachineTypes: machines,
			Disks: map[string]DiskSource{
				"boot":  {Path: vmiDir + "/container-disks/boot.qcow2", Format: FormatQCOW2},
				"sata":  {Path: vmiDir + "/empty-disks/sata.qcow2", Format: FormatQCOW2},
				"scsi1": {Path: "/dev/vireo/scsi1", Format: FormatRaw, Block: true, DirectIO: true},
				"scsi2": {Path: claimsDir + "/scsi2/disk.img", Format: FormatRaw},
				"usb":   {Path: vmiDir + "/empty-disks/usb.qcow2", Format: FormatQCOW2},
			},
		})},
		{name: "minimal", in: Inputs{Emulation: EmulationKVM, AgentSocket: vmiDir + "/private/agent.sock"}},
		{name: "efi", in: sockets(Inputs{Emulation: EmulationTCG, MachineTypes: machines})},
	}
}

// loadVMI reads testdata/<name>.yaml strictly.
func loadVMI(t *testing.T, name string) *v1.VirtualMachineInstance {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	vmi := &v1.VirtualMachineInstance{}
	if err := yaml.UnmarshalStrict(data, vmi); err != nil {
		t.Fatalf("%s.yaml: %v", name, err)
	}
	return vmi
}

// buildXML builds and marshals the domain of a golden case.
func buildXML(t *testing.T, c goldenCase) string {
	t.Helper()
	d, err := Build(loadVMI(t, c.name), c.in)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	out, err := Marshal(d)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	return out + "\n"
}

func TestGolden(t *testing.T) {
	for _, c := range goldenCases(t) {
		t.Run(c.name, func(t *testing.T) {
			got := buildXML(t, c)
			path := filepath.Join("testdata", c.name+".xml")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("%s differs from the built domain (-want +got); run with -update if the change is intended:\n%s", path, diff)
			}
			if again := buildXML(t, c); again != got {
				t.Errorf("Build is not deterministic for %s", c.name)
			}
		})
	}
}
