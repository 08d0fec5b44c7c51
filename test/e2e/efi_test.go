package e2e

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// efiVMI is the test guest booted by OVMF: its boot disk carries syslinux's EFI loader at the
// removable-media path. extra is YAML at the spec's indentation. 256 MiB: syslinux's EFI loader
// fails to allocate memory for the kernel in a 128 MiB guest ("Failed to allocate memory for
// kernel image"; measured with QEMU and Debian 12's OVMF).
const efiVMI = `apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: %s}
spec:
  terminationGracePeriodSeconds: 5
  domain:
    resources: {requests: {memory: 256Mi}}
    devices:
      disks: [{name: containerdisk, disk: {bus: virtio}}]
      autoattachPodInterface: false
%s
  volumes: [{name: containerdisk, containerDisk: {image: %s, imagePullPolicy: IfNotPresent}}]
`

// TestEFI: firmware.bootloader.efi boots the test guest with OVMF (its boot manager's lines on
// the serial console, then the guest); with secure boot (the default, which needs SMM) the
// firmware refuses the unsigned loader; the plain one live-migrates; persistent NVRAM is
// refused with a reason.
func TestEFI(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	image := cluster.ContainerDiskImage("tiny")
	kubectl(t, "-n", ns, "apply", "-f", manifestFile(t, fmt.Sprintf(efiVMI, "efi", `    firmware: {bootloader: {efi: {secureBoot: false}}}`, image)+"---\n"+
		fmt.Sprintf(efiVMI, "secure", `    features: {smm: {}}
    firmware: {bootloader: {efi: {}}}`, image)))
	// Both consoles from the start: QEMU keeps no serial output for a later reader.
	plain := openConsole(t, ns, "efi")
	secure := openConsole(t, ns, "secure")
	plain.waitFor(t, "BdsDxe: starting", 3*time.Minute)
	plain.waitFor(t, guestMarker, 3*time.Minute)
	// The secure guest runs on the firmware with Microsoft's keys, with SMM, which refuses the
	// unsigned loader.
	vmi := waitPhase(t, ns, "secure", v1.Running, 3*time.Minute)
	qemu, _ := guestProcesses(t, ns, "secure", string(vmi.UID))
	if len(qemu) != 1 {
		t.Fatalf("QEMU processes of the secure VMI: %v", qemu)
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", qemu[0]))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"OVMF_CODE_4M.ms.fd", "smm=on", "property=secure,value=on"} {
		if !strings.Contains(string(cmdline), want) {
			t.Errorf("the secure guest's QEMU lacks %q: %s", want, strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
	secure.waitFor(t, "Access Denied", 4*time.Minute)

	// The plain guest moves to a new launcher: the target's QEMU starts on its own NVRAM file
	// (the flash's contents come with the guest's memory), and the guest goes on.
	m := startMigration(t, ns, "efi", "")
	waitMigration(t, ns, m.Name, v1.MigrationSucceeded, 3*time.Minute)
	waitVMI(t, ns, "efi", time.Minute, "running in the target Pod alone", func(v *v1.VirtualMachineInstance) bool {
		return v.Status.Phase == v1.Running && len(v.Status.ActivePods) == 1 && v.Status.MigrationState != nil &&
			v.Status.MigrationState.TargetNodeDomainDetected
	})
	moved := openConsole(t, ns, "efi")
	moved.send(t, "echo MOVED-$((6*7))")
	moved.waitFor(t, "MOVED-42", 30*time.Second)

	refusal := fmt.Sprintf(efiVMI, "persistent", `    firmware: {bootloader: {efi: {secureBoot: false, persistent: true}}}`, image)
	_, errOut, err := kubectlResult("-n", ns, "apply", "-f", manifestFile(t, refusal))
	if err == nil || !strings.Contains(errOut, "spec.domain.firmware.bootloader.efi.persistent") || !strings.Contains(errOut, "does not keep EFI variables") {
		t.Errorf("persistent EFI variables: %v %s, want a refusal naming the field", err, errOut)
	}
}
