package domain

import (
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// FuzzBuild feeds arbitrary VMIs (neither defaulted nor validated) to Build, with a disk source
// for every volume they name: Build must refuse what it cannot use, never panic, and what it
// returns must marshal to XML. The seeds are the golden VMIs.
func FuzzBuild(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.yaml")
	for _, path := range seeds {
		if b, err := os.ReadFile(path); err == nil {
			f.Add(b)
		}
	}
	help, err := os.ReadFile("testdata/machine-help.txt")
	if err != nil {
		f.Fatal(err)
	}
	machines := ParseMachineHelp(string(help))
	f.Fuzz(func(t *testing.T, data []byte) {
		vmi := &v1.VirtualMachineInstance{}
		if yaml.Unmarshal(data, vmi) != nil {
			return
		}
		in := tinyInputs()
		in.MachineTypes = machines
		for i, vol := range vmi.Spec.Volumes {
			in.Disks[vol.Name] = DiskSource{Path: "/run/vmi/disk", Format: []string{FormatRaw, FormatQCOW2}[i%2], Block: i%3 == 0}
		}
		if vmi.Spec.Domain.Firmware != nil && vmi.Spec.Domain.Firmware.KernelBoot != nil {
			in.KernelBoot = &KernelBootFiles{Kernel: "/run/vmi/kernel", Initrd: "/run/vmi/initrd"}
		}
		dom, err := Build(vmi, in)
		if err != nil {
			return
		}
		if _, err := dom.Marshal(); err != nil {
			t.Errorf("Build's domain does not marshal: %v", err)
		}
	})
}
