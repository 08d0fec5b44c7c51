package domain

import (
	"fmt"
	"path/filepath"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"libvirt.org/go/libvirtxml"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// vgaVRAMKiB is the video memory of the VGA display (KubeVirt's: 16 MiB).
const vgaVRAMKiB = 16384

// consoleDevices are the serial console and the display of a domain.
type consoleDevices struct {
	serials  []libvirtxml.DomainSerial
	consoles []libvirtxml.DomainConsole
	graphics []libvirtxml.DomainGraphic
	videos   []libvirtxml.DomainVideo
	channels []libvirtxml.DomainChannel
}

// GuestAgentChannel is the name of the virtio-serial port QEMU's guest agent opens in the
// guest (qemu-ga's default), which libvirt talks to.
const GuestAgentChannel = "org.qemu.guest_agent.0"

// consoles returns the serial console and the VNC display, both attached unless the VMI turns
// them off (autoattachSerialConsole, autoattachGraphicsDevice; both default to true, as in
// KubeVirt), and the guest agent's channel, which every domain has (as KubeVirt adds it). QEMU
// binds each on a unix socket whose path the launcher chose; the node agent connects to the
// console and display, libvirt alone to the agent. The display is a VGA adapter.
func consoles(devices *v1.Devices, in Inputs, devicesPath *field.Path) (consoleDevices, field.ErrorList) {
	var out consoleDevices
	var errs field.ErrorList
	if err := checkSocket(in.AgentSocket, "AgentSocket"); err != nil {
		errs = append(errs, field.InternalError(devicesPath, err))
	}
	out.channels = []libvirtxml.DomainChannel{{
		Source: &libvirtxml.DomainChardevSource{UNIX: &libvirtxml.DomainChardevSourceUNIX{Mode: "bind", Path: in.AgentSocket}},
		Target: &libvirtxml.DomainChannelTarget{VirtIO: &libvirtxml.DomainChannelTargetVirtIO{Name: GuestAgentChannel}},
	}}
	if boolOr(devices.AutoattachSerialConsole, true) {
		if err := checkSocket(in.ConsoleSocket, "ConsoleSocket"); err != nil {
			errs = append(errs, field.InternalError(devicesPath.Child("autoattachSerialConsole"), err))
		}
		source := &libvirtxml.DomainChardevSource{UNIX: &libvirtxml.DomainChardevSourceUNIX{Mode: "bind", Path: in.ConsoleSocket}}
		out.serials = []libvirtxml.DomainSerial{{
			Source: source,
			Target: &libvirtxml.DomainSerialTarget{Type: "isa-serial", Port: uintPtr(0),
				Model: &libvirtxml.DomainSerialTargetModel{Name: "isa-serial"}},
		}}
		out.consoles = []libvirtxml.DomainConsole{{
			Source: source,
			Target: &libvirtxml.DomainConsoleTarget{Type: "serial", Port: uintPtr(0)},
		}}
	}
	if boolOr(devices.AutoattachGraphicsDevice, true) {
		if err := checkSocket(in.VNCSocket, "VNCSocket"); err != nil {
			errs = append(errs, field.InternalError(devicesPath.Child("autoattachGraphicsDevice"), err))
		}
		out.graphics = []libvirtxml.DomainGraphic{{VNC: &libvirtxml.DomainGraphicVNC{Socket: in.VNCSocket}}}
		out.videos = []libvirtxml.DomainVideo{{Model: libvirtxml.DomainVideoModel{Type: "vga", Heads: 1, VRam: vgaVRAMKiB}}}
	}
	return out, errs
}

// checkSocket checks a socket path the launcher gave in the Inputs field name.
func checkSocket(path, name string) error {
	if path == "" || !filepath.IsAbs(path) {
		return fmt.Errorf("the launcher gave no absolute socket path in Inputs.%s (got %q)", name, path)
	}
	return nil
}
