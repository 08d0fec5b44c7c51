package v1

import "k8s.io/apimachinery/pkg/api/resource"

// PodQOSClass is a Pod's quality-of-service class: Guaranteed, Burstable or BestEffort.
type PodQOSClass string

// CPUTopology is a guest's CPU topology.
type CPUTopology struct {
	// +optional
	Cores uint32 `json:"cores,omitempty" protobuf:"varint,1,opt,name=cores"`
	// +optional
	Sockets uint32 `json:"sockets,omitempty" protobuf:"varint,2,opt,name=sockets"`
	// +optional
	Threads uint32 `json:"threads,omitempty" protobuf:"varint,3,opt,name=threads"`
}

// MemoryStatus is a guest's memory.
type MemoryStatus struct {
	// GuestAtBoot is the memory the guest booted with.
	// +optional
	GuestAtBoot *resource.Quantity `json:"guestAtBoot,omitempty" protobuf:"bytes,1,opt,name=guestAtBoot"`
	// GuestCurrent is the memory the guest has now.
	// +optional
	GuestCurrent *resource.Quantity `json:"guestCurrent,omitempty" protobuf:"bytes,2,opt,name=guestCurrent"`
	// GuestRequested is the memory asked for.
	// +optional
	GuestRequested *resource.Quantity `json:"guestRequested,omitempty" protobuf:"bytes,3,opt,name=guestRequested"`
	// MemoryOverhead is what the launcher Pod requests on top of the guest's memory.
	// +optional
	MemoryOverhead *resource.Quantity `json:"memoryOverhead,omitempty" protobuf:"bytes,4,opt,name=memoryOverhead"`
}

// TopologyHints are hints for placing a guest.
type TopologyHints struct {
	// TSCFrequency is the guest's TSC frequency, in Hz.
	// +optional
	TSCFrequency *int64 `json:"tscFrequency,omitempty" protobuf:"varint,1,opt,name=tscFrequency"`
}

// VirtualMachineInstanceMigrationMethod is how a guest migrates: BlockMigration or LiveMigration.
type VirtualMachineInstanceMigrationMethod string

// VirtualMachineInstanceMigrationTransport is how migration traffic travels: Unix.
type VirtualMachineInstanceMigrationTransport string

const (
	// LiveMigration copies memory only: the disks are shared or come from images on both nodes.
	LiveMigration VirtualMachineInstanceMigrationMethod = "LiveMigration"
	// BlockMigration copies disks too.
	BlockMigration VirtualMachineInstanceMigrationMethod = "BlockMigration"
	// MigrationTransportUnix sends migration traffic through proxied unix sockets.
	MigrationTransportUnix VirtualMachineInstanceMigrationTransport = "Unix"
)
