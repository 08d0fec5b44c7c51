package virt

import (
	"errors"
	"fmt"
	"os"

	"github.com/vireo-dev/vireo/kvm"
)

// Emulation is how QEMU runs guest code: hardware virtualisation or software emulation.
type Emulation string

// Accelerators.
const (
	// EmulationKVM: hardware-assisted virtualisation (<domain type='kvm'>).
	EmulationKVM Emulation = "kvm"
	// EmulationTCG: QEMU's software emulation (<domain type='qemu'>), 10-50x slower.
	EmulationTCG Emulation = "tcg"
)

// DetectEmulation decides the accelerator for this host: KVM only when /dev/kvm opens for
// reading and writing AND /proc/cpuinfo advertises vmx or svm. A /dev/kvm without those
// flags (a paravirtualised KVM such as PVM) opens but cannot boot stock guest kernels.
// reason says why, for the VMI's SoftwareEmulation condition and the logs.
func DetectEmulation() (Emulation, string) {
	return detectEmulation(kvm.DevicePath, kvm.CPUInfoPath)
}

func detectEmulation(kvmPath, cpuinfoPath string) (Emulation, string) {
	f, err := os.OpenFile(kvmPath, os.O_RDWR, 0)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return EmulationTCG, fmt.Sprintf("software emulation (TCG): cannot open %s: %v", kvmPath, err)
	}
	_ = f.Close()
	flag, err := kvm.CPUFlag(cpuinfoPath)
	if err != nil {
		return EmulationTCG, fmt.Sprintf("software emulation (TCG): %s opens but %v", kvmPath, err)
	}
	if flag == "" {
		return EmulationTCG, fmt.Sprintf("software emulation (TCG): %s opens but %s advertises neither vmx nor svm (a paravirtualised KVM cannot boot stock guests)", kvmPath, cpuinfoPath)
	}
	return EmulationKVM, fmt.Sprintf("KVM: %s opens and the CPU advertises %s", kvmPath, flag)
}
