package domain

import (
	"libvirt.org/go/libvirtxml"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// memBalloonStatsPeriod is how often, in seconds, the balloon driver reports guest memory
// statistics (KubeVirt's default).
const memBalloonStatsPeriod = 10

// miscellaneous are the devices that are not disks, interfaces or consoles.
type miscellaneous struct {
	controllers []libvirtxml.DomainController
	rngs        []libvirtxml.DomainRNG
	memBalloon  *libvirtxml.DomainMemBalloon
}

// miscDevices returns the USB controller (an xHCI controller when a disk is on the usb bus,
// else none: libvirt would otherwise add one nobody uses), the virtio random number generator
// fed from the host's /dev/urandom when spec.domain.devices.rng is set, and a virtio memory
// balloon reporting statistics, which KubeVirt attaches unless autoattachMemBalloon is false.
func miscDevices(devices *v1.Devices, disks []libvirtxml.DomainDisk) miscellaneous {
	var out miscellaneous
	usb := libvirtxml.DomainController{Type: "usb", Index: uintPtr(0), Model: "none"}
	for _, d := range disks {
		if d.Target != nil && d.Target.Bus == string(v1.DiskBusUSB) {
			usb.Model = "qemu-xhci"
		}
	}
	out.controllers = []libvirtxml.DomainController{usb}
	if devices.Rng != nil {
		out.rngs = []libvirtxml.DomainRNG{{
			Model:   "virtio",
			Backend: &libvirtxml.DomainRNGBackend{Random: &libvirtxml.DomainRNGBackendRandom{Device: "/dev/urandom"}},
		}}
	}
	out.memBalloon = &libvirtxml.DomainMemBalloon{
		Model: "virtio",
		Stats: &libvirtxml.DomainMemBalloonStats{Period: memBalloonStatsPeriod},
	}
	if b := devices.AutoattachMemBalloon; b != nil && !*b {
		out.memBalloon = &libvirtxml.DomainMemBalloon{Model: "none"} // else libvirt adds one
	}
	return out
}
