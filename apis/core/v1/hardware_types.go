package v1

// The devices and platform details below are KubeVirt's. Vireo stores them as written (so a
// manifest or client written for KubeVirt loses nothing), and a VMI that needs one Vireo cannot
// provide yet fails when it would start, with reason Unsupported naming the field.

// ClaimRequest names a request of a Kubernetes dynamic resource claim (DRA) listed in
// spec.resourceClaims.
type ClaimRequest struct {
	// ClaimName is the name of an entry in spec.resourceClaims.
	// +optional
	ClaimName string `json:"claimName,omitempty" protobuf:"bytes,1,opt,name=claimName"`
	// RequestName is the request within that claim that provides the device.
	// +optional
	RequestName string `json:"requestName,omitempty" protobuf:"bytes,2,opt,name=requestName"`
}

// GPU passes a GPU (or a mediated vGPU) through to the guest.
type GPU struct {
	// Name of the GPU as the guest's device list knows it.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// DeviceName is the extended resource a device plugin offers, such as nvidia.com/TU104GL.
	// +optional
	DeviceName string `json:"deviceName,omitempty" protobuf:"bytes,2,opt,name=deviceName"`
	// ClaimRequest takes the GPU from a dynamic resource claim instead of a device plugin.
	*ClaimRequest `json:",inline" protobuf:"bytes,3,opt,name=claimRequest"`
	// VirtualGPUOptions are the display settings of a mediated device.
	// +optional
	VirtualGPUOptions *VGPUOptions `json:"virtualGPUOptions,omitempty" protobuf:"bytes,4,opt,name=virtualGPUOptions"`
	// Tag is a label for the device in the guest's device role metadata.
	// +optional
	Tag string `json:"tag,omitempty" protobuf:"bytes,5,opt,name=tag"`
}

// VGPUOptions configures a mediated vGPU.
type VGPUOptions struct {
	// Display is the vGPU's display.
	// +optional
	Display *VGPUDisplayOptions `json:"display,omitempty" protobuf:"bytes,1,opt,name=display"`
}

// VGPUDisplayOptions configures a vGPU's display.
type VGPUDisplayOptions struct {
	// Enabled makes the vGPU the guest's display. Defaults to true.
	// +optional
	Enabled *bool `json:"enabled,omitempty" protobuf:"varint,1,opt,name=enabled"`
	// RamFB gives the display a boot framebuffer.
	// +optional
	RamFB *FeatureState `json:"ramFB,omitempty" protobuf:"bytes,2,opt,name=ramFB"`
}

// HostDevice passes a host device (PCI or mediated) through to the guest.
type HostDevice struct {
	// Name of the device in the guest's device list.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// DeviceName is the extended resource a device plugin offers for it.
	// +optional
	DeviceName string `json:"deviceName,omitempty" protobuf:"bytes,2,opt,name=deviceName"`
	// ClaimRequest takes the device from a dynamic resource claim instead.
	*ClaimRequest `json:",inline" protobuf:"bytes,3,opt,name=claimRequest"`
	// Tag is a label for the device in the guest's device role metadata.
	// +optional
	Tag string `json:"tag,omitempty" protobuf:"bytes,4,opt,name=tag"`
}

// InputBus is the bus of an input device: usb or virtio.
type InputBus string

// InputType is the kind of an input device: tablet.
type InputType string

// Input is a pointing device, such as a USB tablet that makes a VNC pointer follow the mouse.
type Input struct {
	// Bus is usb or virtio. Defaults to usb.
	// +optional
	Bus InputBus `json:"bus,omitempty" protobuf:"bytes,1,opt,name=bus,casttype=InputBus"`
	// Type is tablet.
	Type InputType `json:"type" protobuf:"bytes,2,opt,name=type,casttype=InputType"`
	// Name of the device.
	Name string `json:"name" protobuf:"bytes,3,opt,name=name"`
}

// WatchdogAction is what a watchdog does when the guest stops feeding it: poweroff, reset,
// shutdown or dump.
type WatchdogAction string

// Watchdog is a hardware watchdog the guest must keep feeding.
type Watchdog struct {
	// Name of the watchdog.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// WatchdogDevice is its model; exactly one may be set.
	WatchdogDevice `json:",inline" protobuf:"bytes,2,opt,name=watchdogDevice"`
}

// WatchdogDevice is a watchdog model.
type WatchdogDevice struct {
	// I6300ESB is Intel's emulated PCI watchdog (amd64).
	// +optional
	I6300ESB *I6300ESBWatchdog `json:"i6300esb,omitempty" protobuf:"bytes,1,opt,name=i6300esb"`
	// Diag288 is the s390x watchdog.
	// +optional
	Diag288 *Diag288Watchdog `json:"diag288,omitempty" protobuf:"bytes,2,opt,name=diag288"`
}

// I6300ESBWatchdog is an i6300esb watchdog.
type I6300ESBWatchdog struct {
	// Action when it expires. Defaults to reset.
	// +optional
	Action WatchdogAction `json:"action,omitempty" protobuf:"bytes,1,opt,name=action,casttype=WatchdogAction"`
}

// Diag288Watchdog is a diag288 watchdog.
type Diag288Watchdog struct {
	// Action when it expires. Defaults to reset.
	// +optional
	Action WatchdogAction `json:"action,omitempty" protobuf:"bytes,1,opt,name=action,casttype=WatchdogAction"`
}

// SoundDevice is an emulated sound card.
type SoundDevice struct {
	// Name of the device.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// Model is ich9 or ac97. Defaults to ich9.
	// +optional
	Model string `json:"model,omitempty" protobuf:"bytes,2,opt,name=model"`
}

// VideoDevice picks the guest's display adapter.
type VideoDevice struct {
	// Type is the adapter, such as vga, virtio, bochs or ramfb.
	// +optional
	Type string `json:"type,omitempty" protobuf:"bytes,1,opt,name=type"`
}

// PanicDeviceModel is a guest panic notifier's model: isa, hyperv or s390.
type PanicDeviceModel string

// PanicDevice lets the guest report a crash to the host.
type PanicDevice struct {
	// Model of the notifier.
	// +optional
	Model *PanicDeviceModel `json:"model,omitempty" protobuf:"bytes,1,opt,name=model,casttype=PanicDeviceModel"`
}

// Filesystem shares a volume with the guest as a filesystem (virtiofs) instead of a disk.
type Filesystem struct {
	// Name of the volume in spec.volumes.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// Virtiofs shares it through virtiofsd.
	Virtiofs *FilesystemVirtiofs `json:"virtiofs" protobuf:"bytes,2,opt,name=virtiofs"`
}

// FilesystemVirtiofs selects virtiofs; it has no settings.
type FilesystemVirtiofs struct{}

// ClientPassthroughDevices lets a client pass its USB devices through to the guest (virtctl usbredir).
type ClientPassthroughDevices struct{}

// DownwardMetrics gives the guest a virtio-serial port with the host's metrics about it.
type DownwardMetrics struct{}

// Chassis is the SMBIOS chassis information the guest sees.
type Chassis struct {
	// +optional
	Manufacturer string `json:"manufacturer,omitempty" protobuf:"bytes,1,opt,name=manufacturer"`
	// +optional
	Version string `json:"version,omitempty" protobuf:"bytes,2,opt,name=version"`
	// +optional
	Serial string `json:"serial,omitempty" protobuf:"bytes,3,opt,name=serial"`
	// +optional
	Asset string `json:"asset,omitempty" protobuf:"bytes,4,opt,name=asset"`
	// +optional
	Sku string `json:"sku,omitempty" protobuf:"bytes,5,opt,name=sku"`
}

// ACPI adds ACPI tables from Secrets named in spec.volumes.
type ACPI struct {
	// SlicNameRef names the volume holding a SLIC table.
	// +optional
	SlicNameRef string `json:"slicNameRef,omitempty" protobuf:"bytes,1,opt,name=slicNameRef"`
	// MsdmNameRef names the volume holding an MSDM table.
	// +optional
	MsdmNameRef string `json:"msdmNameRef,omitempty" protobuf:"bytes,2,opt,name=msdmNameRef"`
}
