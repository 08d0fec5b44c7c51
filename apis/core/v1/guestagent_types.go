package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// VirtualMachineInstanceGuestAgentInfo is what the guest agent says of the guest: the answer of
// the guestosinfo subresource (KubeVirt's type).
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachineInstanceGuestAgentInfo struct {
	metav1.TypeMeta `json:",inline"`
	// GAVersion is the guest agent's version.
	// +optional
	GAVersion string `json:"guestAgentVersion,omitempty" protobuf:"bytes,1,opt,name=guestAgentVersion"`
	// SupportedCommands are the agent's commands and whether each is enabled.
	// +optional
	// +listType=atomic
	SupportedCommands []GuestAgentCommandInfo `json:"supportedCommands,omitempty" protobuf:"bytes,2,rep,name=supportedCommands"`
	// Hostname is the guest's host name.
	// +optional
	Hostname string `json:"hostname,omitempty" protobuf:"bytes,3,opt,name=hostname"`
	// OS is the guest's operating system.
	// +optional
	OS VirtualMachineInstanceGuestOSInfo `json:"os,omitempty" protobuf:"bytes,4,opt,name=os"`
	// Timezone is the guest's time zone and offset, such as "UTC, 0".
	// +optional
	Timezone string `json:"timezone,omitempty" protobuf:"bytes,5,opt,name=timezone"`
	// UserList are the users logged in to the guest.
	// +optional
	// +listType=atomic
	UserList []VirtualMachineInstanceGuestOSUser `json:"userList,omitempty" protobuf:"bytes,6,rep,name=userList"`
	// FSInfo are the guest's mounted filesystems.
	// +optional
	FSInfo VirtualMachineInstanceFileSystemInfo `json:"fsInfo,omitempty" protobuf:"bytes,7,opt,name=fsInfo"`
	// FSFreezeStatus is "frozen" while the guest's filesystems are frozen.
	// +optional
	FSFreezeStatus string `json:"fsFreezeStatus,omitempty" protobuf:"bytes,8,opt,name=fsFreezeStatus"`
}

// GuestAgentCommandInfo is one command of the guest agent.
type GuestAgentCommandInfo struct {
	// Name of the command, such as guest-ping.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// Enabled says whether the agent runs the command.
	// +optional
	Enabled bool `json:"enabled,omitempty" protobuf:"varint,2,opt,name=enabled"`
}

// VirtualMachineInstanceGuestOSUser is a user logged in to the guest.
type VirtualMachineInstanceGuestOSUser struct {
	// UserName is the user's name.
	UserName string `json:"userName" protobuf:"bytes,1,opt,name=userName"`
	// Domain is the user's domain (Windows guests).
	// +optional
	Domain string `json:"domain,omitempty" protobuf:"bytes,2,opt,name=domain"`
	// LoginTime is when the user logged in, in seconds since the epoch.
	// +optional
	LoginTime float64 `json:"loginTime,omitempty" protobuf:"fixed64,3,opt,name=loginTime"`
}

// VirtualMachineInstanceFileSystemInfo are the guest's mounted filesystems.
type VirtualMachineInstanceFileSystemInfo struct {
	// Filesystems are the mounted filesystems.
	// +listType=atomic
	Filesystems []VirtualMachineInstanceFileSystem `json:"disks" protobuf:"bytes,1,rep,name=disks"`
}

// VirtualMachineInstanceFileSystem is one mounted filesystem of the guest.
type VirtualMachineInstanceFileSystem struct {
	// DiskName is the guest's name of the device, such as vda1.
	DiskName string `json:"diskName" protobuf:"bytes,1,opt,name=diskName"`
	// MountPoint is where it is mounted, such as /.
	MountPoint string `json:"mountPoint" protobuf:"bytes,2,opt,name=mountPoint"`
	// FileSystemType is its type, such as ext4.
	FileSystemType string `json:"fileSystemType" protobuf:"bytes,3,opt,name=fileSystemType"`
	// UsedBytes is how much of it is used.
	UsedBytes int64 `json:"usedBytes" protobuf:"varint,4,opt,name=usedBytes"`
	// TotalBytes is its size.
	TotalBytes int64 `json:"totalBytes" protobuf:"varint,5,opt,name=totalBytes"`
	// Disk are the disks it is on.
	// +optional
	// +listType=atomic
	Disk []VirtualMachineInstanceFileSystemDisk `json:"disk,omitempty" protobuf:"bytes,6,rep,name=disk"`
}

// VirtualMachineInstanceFileSystemDisk is a disk a guest filesystem is on.
type VirtualMachineInstanceFileSystemDisk struct {
	// Serial is the disk's serial number.
	// +optional
	Serial string `json:"serial,omitempty" protobuf:"bytes,1,opt,name=serial"`
	// BusType is the disk's bus, such as virtio or scsi.
	BusType string `json:"busType" protobuf:"bytes,2,opt,name=busType"`
}

// VirtualMachineInstanceGuestOSUserList is the answer of the userlist subresource.
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachineInstanceGuestOSUserList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Items are the logged-in users.
	// +listType=atomic
	Items []VirtualMachineInstanceGuestOSUser `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// VirtualMachineInstanceFileSystemList is the answer of the filesystemlist subresource.
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachineInstanceFileSystemList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Items are the mounted filesystems.
	// +listType=atomic
	Items []VirtualMachineInstanceFileSystem `json:"items" protobuf:"bytes,2,rep,name=items"`
}
