package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// VirtualMachineInstanceGuestAgentInfo is what the guest agent says of the guest: the answer of
// the guestosinfo subresource (KubeVirt's type).
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachineInstanceGuestAgentInfo struct {
	metav1.TypeMeta `json:",inline"`
	// GAVersion is the guest agent's version.
	// +optional
	GAVersion string `json:"guestAgentVersion,omitempty"`
	// SupportedCommands are the agent's commands and whether each is enabled.
	// +optional
	// +listType=atomic
	SupportedCommands []GuestAgentCommandInfo `json:"supportedCommands,omitempty"`
	// Hostname is the guest's host name.
	// +optional
	Hostname string `json:"hostname,omitempty"`
	// OS is the guest's operating system.
	// +optional
	OS VirtualMachineInstanceGuestOSInfo `json:"os,omitempty"`
	// Timezone is the guest's time zone and offset, such as "UTC, 0".
	// +optional
	Timezone string `json:"timezone,omitempty"`
	// UserList are the users logged in to the guest.
	// +optional
	// +listType=atomic
	UserList []VirtualMachineInstanceGuestOSUser `json:"userList,omitempty"`
	// FSInfo are the guest's mounted filesystems.
	// +optional
	FSInfo VirtualMachineInstanceFileSystemInfo `json:"fsInfo,omitempty"`
	// FSFreezeStatus is "frozen" while the guest's filesystems are frozen.
	// +optional
	FSFreezeStatus string `json:"fsFreezeStatus,omitempty"`
}

// GuestAgentCommandInfo is one command of the guest agent.
type GuestAgentCommandInfo struct {
	// Name of the command, such as guest-ping.
	Name string `json:"name"`
	// Enabled says whether the agent runs the command.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
}

// VirtualMachineInstanceGuestOSUser is a user logged in to the guest.
type VirtualMachineInstanceGuestOSUser struct {
	// UserName is the user's name.
	UserName string `json:"userName"`
	// Domain is the user's domain (Windows guests).
	// +optional
	Domain string `json:"domain,omitempty"`
	// LoginTime is when the user logged in, in seconds since the epoch.
	// +optional
	LoginTime float64 `json:"loginTime,omitempty"`
}

// VirtualMachineInstanceFileSystemInfo are the guest's mounted filesystems.
type VirtualMachineInstanceFileSystemInfo struct {
	// Filesystems are the mounted filesystems.
	// +listType=atomic
	Filesystems []VirtualMachineInstanceFileSystem `json:"disks"`
}

// VirtualMachineInstanceFileSystem is one mounted filesystem of the guest.
type VirtualMachineInstanceFileSystem struct {
	// DiskName is the guest's name of the device, such as vda1.
	DiskName string `json:"diskName"`
	// MountPoint is where it is mounted, such as /.
	MountPoint string `json:"mountPoint"`
	// FileSystemType is its type, such as ext4.
	FileSystemType string `json:"fileSystemType"`
	// UsedBytes is how much of it is used.
	UsedBytes int `json:"usedBytes"`
	// TotalBytes is its size.
	TotalBytes int `json:"totalBytes"`
	// Disk are the disks it is on.
	// +optional
	// +listType=atomic
	Disk []VirtualMachineInstanceFileSystemDisk `json:"disk,omitempty"`
}

// VirtualMachineInstanceFileSystemDisk is a disk a guest filesystem is on.
type VirtualMachineInstanceFileSystemDisk struct {
	// Serial is the disk's serial number.
	// +optional
	Serial string `json:"serial,omitempty"`
	// BusType is the disk's bus, such as virtio or scsi.
	BusType string `json:"busType"`
}

// VirtualMachineInstanceGuestOSUserList is the answer of the userlist subresource.
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachineInstanceGuestOSUserList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the logged-in users.
	// +listType=atomic
	Items []VirtualMachineInstanceGuestOSUser `json:"items"`
}

// VirtualMachineInstanceFileSystemList is the answer of the filesystemlist subresource.
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachineInstanceFileSystemList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the mounted filesystems.
	// +listType=atomic
	Items []VirtualMachineInstanceFileSystem `json:"items"`
}
