package virt

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"
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
	return detectEmulation("/dev/kvm", "/proc/cpuinfo")
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
	flag, err := virtualisationFlag(cpuinfoPath)
	if err != nil {
		return EmulationTCG, fmt.Sprintf("software emulation (TCG): %s opens but %v", kvmPath, err)
	}
	if flag == "" {
		return EmulationTCG, fmt.Sprintf("software emulation (TCG): %s opens but %s advertises neither vmx nor svm (a paravirtualised KVM cannot boot stock guests)", kvmPath, cpuinfoPath)
	}
	return EmulationKVM, fmt.Sprintf("KVM: %s opens and the CPU advertises %s", kvmPath, flag)
}

// virtualisationFlag returns "vmx" or "svm" when a CPU in cpuinfo advertises it, else "".
func virtualisationFlag(cpuinfoPath string) (string, error) {
	f, err := os.Open(cpuinfoPath)
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %v", cpuinfoPath, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if !ok || strings.TrimSpace(key) != "flags" {
			continue
		}
		for _, fl := range strings.Fields(value) {
			if fl == "vmx" || fl == "svm" {
				return fl, nil
			}
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("cannot read %s: %v", cpuinfoPath, err)
	}
	return "", nil
}
