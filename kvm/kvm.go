// Package kvm holds what the launcher, the node agent and the controller agree on about a
// node's KVM: the extended resource that stands for it (KubeVirt's devices.kubevirt.io/kvm,
// served by the node agent's device plugin and requested by launcher Pods that must not run
// under emulation), its device node, and the rule that decides whether a host's KVM can run
// ordinary guests.
package kvm

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"
)

const (
	// ResourceName is KubeVirt's extended resource for KVM.
	ResourceName = "devices.kubevirt.io/kvm"
	// DevicePath is KVM's device node, on the host and in a launcher container.
	DevicePath = "/dev/kvm"
	// CPUInfoPath is where the CPU's flags are read.
	CPUInfoPath = "/proc/cpuinfo"
	// SysfsPath is the kvm misc device's directory in sysfs: it exists when the kvm module is
	// loaded, and a container can see it without being given the device.
	SysfsPath = "/sys/class/misc/kvm"
)

// CPUFlag returns "vmx" or "svm" when a CPU in cpuinfo advertises hardware virtualisation,
// else "". A KVM without either (a paravirtualised KVM such as PVM) cannot boot stock guests.
func CPUFlag(cpuinfo string) (string, error) {
	f, err := os.Open(cpuinfo)
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %v", cpuinfo, err)
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
		return "", fmt.Errorf("cannot read %s: %v", cpuinfo, err)
	}
	return "", nil
}

// NodeUsable reports whether the node's KVM can run ordinary guests, judged from outside
// the device (the node agent is not given it): the kvm module's sysfs directory exists and
// the CPU advertises vmx or svm. reason says why, either way.
func NodeUsable(sysfs, cpuinfo string) (bool, string) {
	if _, err := os.Stat(sysfs); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false, fmt.Sprintf("no KVM: %s does not exist (the kvm module is not loaded)", sysfs)
		}
		return false, fmt.Sprintf("no KVM: %v", err)
	}
	flag, err := CPUFlag(cpuinfo)
	if err != nil {
		return false, fmt.Sprintf("KVM unusable: %v", err)
	}
	if flag == "" {
		return false, fmt.Sprintf("KVM unusable: the kvm module is loaded but %s advertises neither vmx nor svm (a paravirtualised KVM cannot boot stock guests)", cpuinfo)
	}
	return true, fmt.Sprintf("KVM usable: the kvm module is loaded and the CPU advertises %s", flag)
}
