package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// DefaultGracePeriodSeconds is the terminationGracePeriodSeconds a VMI gets when it sets none.
const DefaultGracePeriodSeconds int64 = 30

// VirtualMachineInstance is a running virtual machine: one guest, booted by QEMU in a launcher pod
// on some node. Deleting it shuts the guest down.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachineInstance struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Spec is the desired virtual machine: its virtual hardware, volumes, networks and placement.
	// It cannot be changed after creation.
	Spec VirtualMachineInstanceSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	// Status is what the system last observed about the VMI. It is written by Vireo only.
	// +optional
	Status VirtualMachineInstanceStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// VirtualMachineInstanceList is a list of VirtualMachineInstances.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachineInstanceList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Items are the VirtualMachineInstances in the list.
	Items []VirtualMachineInstance `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// EvictionStrategy is what happens to a VMI when its node is drained.
type EvictionStrategy string

const (
	// EvictionStrategyNone lets the VMI be shut down; a VirtualMachine may then restart it elsewhere.
	EvictionStrategyNone EvictionStrategy = "None"
	// EvictionStrategyLiveMigrate blocks eviction and live-migrates the VMI to another node instead.
	EvictionStrategyLiveMigrate EvictionStrategy = "LiveMigrate"
	// EvictionStrategyLiveMigrateIfPossible live-migrates the VMI when it is live-migratable, and
	// otherwise behaves like None.
	EvictionStrategyLiveMigrateIfPossible EvictionStrategy = "LiveMigrateIfPossible"
	// EvictionStrategyExternal blocks eviction and leaves it to an external controller to move or
	// stop the VMI.
	EvictionStrategyExternal EvictionStrategy = "External"
)

// StartStrategy is how the guest is started.
type StartStrategy string

const (
	// StartStrategyPaused creates the guest paused; it runs only after an unpause.
	StartStrategyPaused StartStrategy = "Paused"
)

// VirtualMachineInstanceSpec is the desired state of a VirtualMachineInstance.
type VirtualMachineInstanceSpec struct {
	// Domain is the guest's virtual hardware.
	Domain DomainSpec `json:"domain" protobuf:"bytes,1,opt,name=domain"`
	// Volumes are the sources of data that disks in domain.devices.disks attach. Server-side apply
	// merges them by name.
	// +optional
	// +listType=map
	// +listMapKey=name
	Volumes []Volume `json:"volumes,omitempty" protobuf:"bytes,2,rep,name=volumes"`
	// Networks are the networks that interfaces in domain.devices.interfaces connect to.
	// Server-side apply merges them by name.
	// +optional
	// +listType=map
	// +listMapKey=name
	Networks []Network `json:"networks,omitempty" protobuf:"bytes,3,rep,name=networks"`
	// TerminationGracePeriodSeconds is how long the guest gets to shut down after an ACPI power-off
	// request before it is forcibly stopped. 0 stops it at once. Defaults to 30.
	// +optional
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty" protobuf:"varint,4,opt,name=terminationGracePeriodSeconds"`
	// NodeSelector restricts the VMI to nodes that carry all of these labels.
	// +optional
	// +mapType=atomic
	NodeSelector map[string]string `json:"nodeSelector,omitempty" protobuf:"bytes,5,rep,name=nodeSelector"`
	// Affinity holds node and pod affinity rules for placing the VMI.
	// +optional
	Affinity *Affinity `json:"affinity,omitempty" protobuf:"bytes,6,opt,name=affinity"`
	// Tolerations let the VMI run on nodes with matching taints.
	// +optional
	// +listType=atomic
	Tolerations []Toleration `json:"tolerations,omitempty" protobuf:"bytes,7,rep,name=tolerations"`
	// EvictionStrategy is what happens to the VMI when its node is drained: None, LiveMigrate,
	// LiveMigrateIfPossible or External. Defaults to the cluster-wide setting.
	// +optional
	EvictionStrategy *EvictionStrategy `json:"evictionStrategy,omitempty" protobuf:"bytes,8,opt,name=evictionStrategy,casttype=EvictionStrategy"`
	// StartStrategy "Paused" starts the guest paused.
	// +optional
	StartStrategy *StartStrategy `json:"startStrategy,omitempty" protobuf:"bytes,9,opt,name=startStrategy,casttype=StartStrategy"`
	// Hostname is the guest's host name, passed through DHCP and cloud-init. Defaults to the VMI's
	// name. Must be a DNS-1123 label.
	// +optional
	Hostname string `json:"hostname,omitempty" protobuf:"bytes,10,opt,name=hostname"`
	// PriorityClassName is the PriorityClass of the launcher pod, which decides which pods the
	// scheduler may preempt for it. The cluster's default priority applies when empty.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty" protobuf:"bytes,11,opt,name=priorityClassName"`
	// Subdomain, when set, gives the VMI the fully qualified name
	// "<hostname>.<subdomain>.<namespace>.svc.<cluster domain>", through a headless Service of that name.
	// Must be a DNS-1123 subdomain.
	// +optional
	Subdomain string `json:"subdomain,omitempty" protobuf:"bytes,12,opt,name=subdomain"`
	// AccessCredentials are SSH keys and passwords put into the guest for remote access.
	// +optional
	// +listType=atomic
	AccessCredentials []AccessCredential `json:"accessCredentials,omitempty" protobuf:"bytes,13,rep,name=accessCredentials"`
	// ReadinessProbe decides whether the VMI is Ready (and so whether Services send it traffic);
	// without one it is Ready once its guest runs.
	// +optional
	ReadinessProbe *Probe `json:"readinessProbe,omitempty" protobuf:"bytes,14,opt,name=readinessProbe"`
	// LivenessProbe ends the VMI (Failed) when the guest stops answering it; a VirtualMachine's
	// run strategy then decides whether it starts again.
	// +optional
	LivenessProbe *Probe `json:"livenessProbe,omitempty" protobuf:"bytes,15,opt,name=livenessProbe"`
	// Architecture is the CPU architecture of the guest (amd64, arm64 or s390x); it selects the
	// machine type and device defaults. Defaults to the cluster's architecture (amd64).
	// +optional
	Architecture string `json:"architecture,omitempty" protobuf:"bytes,16,opt,name=architecture"`
	// SchedulerName is the scheduler that places the launcher Pod. Defaults to the cluster's.
	// +optional
	SchedulerName string `json:"schedulerName,omitempty" protobuf:"bytes,17,opt,name=schedulerName"`
	// ServiceAccountName is the launcher Pod's service account (KubeVirt deprecates it in favour
	// of serviceAccount volumes).
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty" protobuf:"bytes,18,opt,name=serviceAccountName"`
	// TopologySpreadConstraints spread the launcher Pod across a topology.
	// +optional
	// +patchMergeKey=topologyKey
	// +patchStrategy=merge
	// +listType=map
	// +listMapKey=topologyKey
	// +listMapKey=whenUnsatisfiable
	TopologySpreadConstraints []TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty" patchStrategy:"merge" patchMergeKey:"topologyKey" protobuf:"bytes,19,rep,name=topologySpreadConstraints"`
	// DNSPolicy is the launcher Pod's DNS policy. Defaults to ClusterFirst.
	// +optional
	DNSPolicy DNSPolicy `json:"dnsPolicy,omitempty" protobuf:"bytes,20,opt,name=dnsPolicy,casttype=DNSPolicy"`
	// DNSConfig adds to the launcher Pod's DNS configuration.
	// +optional
	DNSConfig *PodDNSConfig `json:"dnsConfig,omitempty" protobuf:"bytes,21,opt,name=dnsConfig"`
	// ResourceClaims are dynamic resource claims (DRA) the launcher Pod takes.
	// +optional
	// +listType=map
	// +listMapKey=name
	ResourceClaims []VirtualMachineInstanceResourceClaim `json:"resourceClaims,omitempty" protobuf:"bytes,22,rep,name=resourceClaims"`
	// UtilityVolumes are claims mounted into the launcher Pod for utilities, not shown to the guest.
	// +optional
	// +listType=map
	// +listMapKey=name
	UtilityVolumes []UtilityVolume `json:"utilityVolumes,omitempty" protobuf:"bytes,23,rep,name=utilityVolumes"`
}

// VirtualMachineInstancePhase is the coarse lifecycle state of a VMI.
type VirtualMachineInstancePhase string

const (
	// VmPhaseUnset is the phase of a VMI that has not been processed yet.
	VmPhaseUnset VirtualMachineInstancePhase = ""
	// Pending means the VMI has been accepted but no launcher pod exists yet.
	Pending VirtualMachineInstancePhase = "Pending"
	// Scheduling means a launcher pod exists but is not yet scheduled and running.
	Scheduling VirtualMachineInstancePhase = "Scheduling"
	// Scheduled means the launcher pod runs on status.nodeName; that node's agent now starts the guest.
	Scheduled VirtualMachineInstancePhase = "Scheduled"
	// Running means the guest has been started.
	Running VirtualMachineInstancePhase = "Running"
	// Succeeded means the guest stopped on its own or was shut down on request.
	Succeeded VirtualMachineInstancePhase = "Succeeded"
	// Failed means the guest crashed, its launcher died, or it could not be started.
	Failed VirtualMachineInstancePhase = "Failed"
	// Unknown means the state of the VMI could not be determined, usually because its node is unreachable.
	Unknown VirtualMachineInstancePhase = "Unknown"
)

// ConditionStatus is the truth value of a condition.
type ConditionStatus string

const (
	// ConditionTrue means the condition holds.
	ConditionTrue ConditionStatus = "True"
	// ConditionFalse means the condition does not hold.
	ConditionFalse ConditionStatus = "False"
	// ConditionUnknown means it is not known whether the condition holds.
	ConditionUnknown ConditionStatus = "Unknown"
)

// VirtualMachineInstanceConditionType names a condition of a VMI.
type VirtualMachineInstanceConditionType string

const (
	// VirtualMachineInstanceReady is True when the launcher pod is ready and the guest is running,
	// so the VMI can be added to Service endpoints.
	VirtualMachineInstanceReady VirtualMachineInstanceConditionType = "Ready"
	// VirtualMachineInstancePodScheduled mirrors the launcher pod's PodScheduled condition when it is
	// False, for example with reason Unschedulable.
	VirtualMachineInstancePodScheduled VirtualMachineInstanceConditionType = "PodScheduled"
	// VirtualMachineInstancePaused is True while the guest is paused.
	VirtualMachineInstancePaused VirtualMachineInstanceConditionType = "Paused"
	// VirtualMachineInstanceIsMigratable is True when the VMI can be live-migrated; when False its
	// reason and message say why not.
	VirtualMachineInstanceIsMigratable VirtualMachineInstanceConditionType = "LiveMigratable"
	// VirtualMachineInstanceSynchronized is False, with a message, when the node agent failed to bring
	// the guest to the desired state, or when the launcher Pod cannot pull an image (reason
	// ErrImagePull or ImagePullBackOff, the kubelet's message).
	VirtualMachineInstanceSynchronized VirtualMachineInstanceConditionType = "Synchronized"
	// VirtualMachineInstanceAgentConnected is True while a guest agent is connected.
	VirtualMachineInstanceAgentConnected VirtualMachineInstanceConditionType = "AgentConnected"
	// VirtualMachineInstanceAccessCredentialsSynchronized is True once the guest agent applied the
	// VMI's qemuGuestAgent access credentials, False with a reason while it could not.
	VirtualMachineInstanceAccessCredentialsSynchronized VirtualMachineInstanceConditionType = "AccessCredentialsSynchronized"
	// VirtualMachineInstanceSoftwareEmulation is True when the guest runs under software emulation
	// (QEMU TCG) instead of hardware virtualization (KVM).
	VirtualMachineInstanceSoftwareEmulation VirtualMachineInstanceConditionType = "SoftwareEmulation"
	// VirtualMachineInstanceDataVolumesReady is True when all DataVolumes the VMI uses have finished
	// populating their volumes.
	VirtualMachineInstanceDataVolumesReady VirtualMachineInstanceConditionType = "DataVolumesReady"
	// VirtualMachineInstanceProvisioning is True while DataVolumes the VMI uses are still being provisioned.
	VirtualMachineInstanceProvisioning VirtualMachineInstanceConditionType = "Provisioning"
)

// VirtualMachineInstanceCondition is one observed condition of a VMI.
type VirtualMachineInstanceCondition struct {
	// Type of the condition, such as Ready or LiveMigratable.
	Type VirtualMachineInstanceConditionType `json:"type" protobuf:"bytes,1,opt,name=type,casttype=VirtualMachineInstanceConditionType"`
	// Status of the condition: True, False or Unknown.
	Status ConditionStatus `json:"status" protobuf:"bytes,2,opt,name=status,casttype=ConditionStatus"`
	// LastProbeTime is when the condition was last checked.
	// +optional
	// +nullable
	LastProbeTime metav1.Time `json:"lastProbeTime,omitempty" protobuf:"bytes,3,opt,name=lastProbeTime"`
	// LastTransitionTime is when the status of the condition last changed.
	// +optional
	// +nullable
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty" protobuf:"bytes,4,opt,name=lastTransitionTime"`
	// Reason is a CamelCase, machine-readable cause of the condition's status.
	// +optional
	Reason string `json:"reason,omitempty" protobuf:"bytes,5,opt,name=reason"`
	// Message explains the condition's status to humans.
	// +optional
	Message string `json:"message,omitempty" protobuf:"bytes,6,opt,name=message"`
}

// VirtualMachineInstancePhaseTransitionTimestamp records when a VMI entered a phase.
type VirtualMachineInstancePhaseTransitionTimestamp struct {
	// Phase the VMI entered.
	// +optional
	Phase VirtualMachineInstancePhase `json:"phase,omitempty" protobuf:"bytes,1,opt,name=phase,casttype=VirtualMachineInstancePhase"`
	// PhaseTransitionTimestamp is when the VMI entered the phase.
	// +optional
	PhaseTransitionTimestamp metav1.Time `json:"phaseTransitionTimestamp,omitempty" protobuf:"bytes,2,opt,name=phaseTransitionTimestamp"`
}

// VirtualMachineInstanceStatus is the observed state of a VirtualMachineInstance.
type VirtualMachineInstanceStatus struct {
	// Phase is the coarse lifecycle state: Pending, Scheduling, Scheduled, Running, Succeeded, Failed or Unknown.
	// +optional
	Phase VirtualMachineInstancePhase `json:"phase,omitempty" protobuf:"bytes,1,opt,name=phase,casttype=VirtualMachineInstancePhase"`
	// PhaseTransitionTimestamps records when the VMI entered each phase, oldest first.
	// +optional
	// +listType=atomic
	PhaseTransitionTimestamps []VirtualMachineInstancePhaseTransitionTimestamp `json:"phaseTransitionTimestamps,omitempty" protobuf:"bytes,2,rep,name=phaseTransitionTimestamps"`
	// Conditions are the current observed conditions of the VMI, one per type.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []VirtualMachineInstanceCondition `json:"conditions,omitempty" protobuf:"bytes,3,rep,name=conditions"`
	// NodeName is the node the VMI runs on.
	// +optional
	NodeName string `json:"nodeName,omitempty" protobuf:"bytes,4,opt,name=nodeName"`
	// Reason is a CamelCase cause of the VMI's current state, such as NodeUnresponsive.
	// +optional
	Reason string `json:"reason,omitempty" protobuf:"bytes,5,opt,name=reason"`
	// Interfaces reports the guest's network interfaces and their addresses.
	// +optional
	// +listType=atomic
	Interfaces []VirtualMachineInstanceNetworkInterface `json:"interfaces,omitempty" protobuf:"bytes,6,rep,name=interfaces"`
	// MigrationState describes the latest live migration of this VMI.
	// +optional
	MigrationState *VirtualMachineInstanceMigrationState `json:"migrationState,omitempty" protobuf:"bytes,7,opt,name=migrationState"`
	// ActivePods maps the UID of each launcher pod of this VMI to its node name; during a live
	// migration there are two.
	// +optional
	ActivePods map[types.UID]string `json:"activePods,omitempty" protobuf:"bytes,8,rep,name=activePods,castkey=k8s.io/apimachinery/pkg/types.UID"`
	// GuestOSInfo describes the guest operating system, as reported by a guest agent.
	// +optional
	GuestOSInfo VirtualMachineInstanceGuestOSInfo `json:"guestOSInfo,omitempty" protobuf:"bytes,9,opt,name=guestOSInfo"`
	// LauncherContainerImageVersion is the launcher image the VMI currently runs with.
	// +optional
	LauncherContainerImageVersion string `json:"launcherContainerImageVersion,omitempty" protobuf:"bytes,10,opt,name=launcherContainerImageVersion"`
	// VolumeStatus reports, for each containerDisk volume, the image the guest's disk comes from,
	// by digest (KubeVirt's list; Vireo lists the volumes it has something to say about).
	// +optional
	// +listType=atomic
	VolumeStatus []VolumeStatus `json:"volumeStatus,omitempty" protobuf:"bytes,11,rep,name=volumeStatus"`
	// KernelBootStatus reports the kernelBoot container image the guest's kernel comes from.
	// +optional
	KernelBootStatus *KernelBootStatus `json:"kernelBootStatus,omitempty" protobuf:"bytes,12,opt,name=kernelBootStatus"`
	// MigratedVolumes are the volumes a storage migration moved.
	// +optional
	// +listType=atomic
	MigratedVolumes []StorageMigratedVolumeInfo `json:"migratedVolumes,omitempty" protobuf:"bytes,13,rep,name=migratedVolumes"`
	// ChangedBlockTracking is the state of changed block tracking.
	// +optional
	ChangedBlockTracking *ChangedBlockTrackingStatus `json:"changedBlockTracking,omitempty" protobuf:"bytes,14,opt,name=changedBlockTracking"`
	// QOSClass is the launcher Pod's quality-of-service class.
	// +optional
	QOSClass *PodQOSClass `json:"qosClass,omitempty" protobuf:"bytes,15,opt,name=qosClass,casttype=PodQOSClass"`
	// Machine is the machine type the guest runs on.
	// +optional
	Machine *Machine `json:"machine,omitempty" protobuf:"bytes,16,opt,name=machine"`
	// CurrentCPUTopology is the guest's CPU topology.
	// +optional
	CurrentCPUTopology *CPUTopology `json:"currentCPUTopology,omitempty" protobuf:"bytes,17,opt,name=currentCPUTopology"`
	// Memory is the guest's memory: at boot, now, requested, and the launcher's overhead.
	// +optional
	Memory *MemoryStatus `json:"memory,omitempty" protobuf:"bytes,18,opt,name=memory"`
	// FSFreezeStatus is "frozen" while the guest's filesystems are frozen.
	// +optional
	FSFreezeStatus string `json:"fsFreezeStatus,omitempty" protobuf:"bytes,19,opt,name=fsFreezeStatus"`
	// MigrationMethod is how the guest migrates: LiveMigration (shared or no disks to copy) or
	// BlockMigration.
	// +optional
	MigrationMethod VirtualMachineInstanceMigrationMethod `json:"migrationMethod,omitempty" protobuf:"bytes,20,opt,name=migrationMethod,casttype=VirtualMachineInstanceMigrationMethod"`
	// MigrationTransport is how migration traffic travels (KubeVirt's Unix: proxied sockets).
	// +optional
	MigrationTransport VirtualMachineInstanceMigrationTransport `json:"migrationTransport,omitempty" protobuf:"bytes,21,opt,name=migrationTransport,casttype=VirtualMachineInstanceMigrationTransport"`
	// EvacuationNodeName is the node the VMI is being evacuated from.
	// +optional
	EvacuationNodeName string `json:"evacuationNodeName,omitempty" protobuf:"bytes,22,opt,name=evacuationNodeName"`
	// VirtualMachineRevisionName is the ControllerRevision of the VM spec the VMI was made from.
	// +optional
	VirtualMachineRevisionName string `json:"virtualMachineRevisionName,omitempty" protobuf:"bytes,23,opt,name=virtualMachineRevisionName"`
	// SelinuxContext is the launcher's SELinux context.
	// +optional
	SelinuxContext string `json:"selinuxContext,omitempty" protobuf:"bytes,24,opt,name=selinuxContext"`
	// VSOCKCID is the guest's vsock context ID.
	// +optional
	VSOCKCID *uint32 `json:"VSOCKCID,omitempty" protobuf:"varint,25,opt,name=VSOCKCID"`
	// TopologyHints are hints for placing the guest, such as its TSC frequency.
	// +optional
	TopologyHints *TopologyHints `json:"topologyHints,omitempty" protobuf:"bytes,26,opt,name=topologyHints"`
	// RuntimeUser is the user ID the guest's processes run as in the launcher pod (107 when not
	// root). KubeVirt's Go client always sends this field, even as 0, so Vireo keeps it, with
	// KubeVirt's JSON name and without omitempty, so that strict decoding of what that client
	// sends succeeds. It is an int64 where KubeVirt has a uint64 (the same JSON number for any
	// user ID) because server-side apply's structured-merge-diff cannot handle uint64 fields.
	// +optional
	RuntimeUser int64 `json:"runtimeUser" protobuf:"varint,27,opt,name=runtimeUser"`
}

// VolumeStatus is what Vireo knows about one volume of a running VMI.
type VolumeStatus struct {
	// Name of the volume in spec.volumes.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// Target is the disk's device name in the guest, such as vda, where known.
	Target string `json:"target" protobuf:"bytes,2,opt,name=target"`
	// Phase of a hotplugged volume (Vireo hotplugs none).
	// +optional
	Phase string `json:"phase,omitempty" protobuf:"bytes,3,opt,name=phase"`
	// Reason is a CamelCase cause of the volume's state.
	// +optional
	Reason string `json:"reason,omitempty" protobuf:"bytes,4,opt,name=reason"`
	// Message explains Reason.
	// +optional
	Message string `json:"message,omitempty" protobuf:"bytes,5,opt,name=message"`
	// SizeBytes is the size of the volume in bytes, where known (KubeVirt's Go field is Size;
	// protobuf's generated Size method takes that name here, the wire name is the same).
	// +optional
	SizeBytes int64 `json:"size,omitempty" protobuf:"varint,6,opt,name=size"`
	// ContainerDiskVolume describes the image of a containerDisk volume.
	// +optional
	ContainerDiskVolume *ContainerDiskInfo `json:"containerDiskVolume,omitempty" protobuf:"bytes,7,opt,name=containerDiskVolume"`
	// PersistentVolumeClaimInfo describes the claim behind the volume.
	// +optional
	PersistentVolumeClaimInfo *PersistentVolumeClaimInfo `json:"persistentVolumeClaimInfo,omitempty" protobuf:"bytes,8,opt,name=persistentVolumeClaimInfo"`
	// HotplugVolume names the Pod that attaches a hotplugged volume.
	// +optional
	HotplugVolume *HotplugVolumeStatus `json:"hotplugVolume,omitempty" protobuf:"bytes,9,opt,name=hotplugVolume"`
	// MemoryDumpVolume describes a memory dump volume.
	// +optional
	MemoryDumpVolume *DomainMemoryDumpInfo `json:"memoryDumpVolume,omitempty" protobuf:"bytes,10,opt,name=memoryDumpVolume"`
}

// ContainerDiskInfo describes the container image a containerDisk volume comes from.
type ContainerDiskInfo struct {
	// ImageID is the image the launcher Pod mounts, by digest (repository@sha256:...), as a
	// Pod's containerStatuses[].imageID names a container's image; a live migration's target
	// mounts this digest even when the volume's tag has moved since.
	// +optional
	ImageID string `json:"imageID,omitempty" protobuf:"bytes,1,opt,name=imageID"`
	// Checksum is KubeVirt's deprecated checksum of the image's disk; Vireo keeps it as written.
	// +optional
	Checksum int64 `json:"checksum,omitempty" protobuf:"varint,2,opt,name=checksum"`
}

// KernelBootStatus describes the kernelBoot container image a VMI's kernel comes from.
type KernelBootStatus struct {
	// ImageID is the kernelBoot image the launcher Pod mounts, by digest (repository@sha256:...).
	// +optional
	ImageID string `json:"imageID,omitempty" protobuf:"bytes,1,opt,name=imageID"`
	// KernelInfo carries KubeVirt's deprecated checksum of the kernel; kept as written.
	// +optional
	KernelInfo *BootFileInfo `json:"kernelInfo,omitempty" protobuf:"bytes,2,opt,name=kernelInfo"`
	// InitrdInfo carries KubeVirt's deprecated checksum of the initrd; kept as written.
	// +optional
	InitrdInfo *BootFileInfo `json:"initrdInfo,omitempty" protobuf:"bytes,3,opt,name=initrdInfo"`
}

// BootFileInfo is KubeVirt's record of a kernel or initrd file.
type BootFileInfo struct {
	// Checksum is the file's deprecated checksum.
	// +optional
	Checksum int64 `json:"checksum,omitempty" protobuf:"varint,1,opt,name=checksum"`
}

// VirtualMachineInstanceNetworkInterface reports one network interface of the guest.
type VirtualMachineInstanceNetworkInterface struct {
	// Name of the interface in spec.domain.devices.interfaces (and of its network).
	// +optional
	Name string `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
	// IP is the interface's primary IP address; it is always the first entry of ipAddresses.
	// +optional
	IP string `json:"ipAddress,omitempty" protobuf:"bytes,2,opt,name=ipAddress"`
	// IPs are all IP addresses of the interface.
	// +optional
	// +listType=atomic
	IPs []string `json:"ipAddresses,omitempty" protobuf:"bytes,3,rep,name=ipAddresses"`
	// MAC is the interface's hardware address.
	// +optional
	MAC string `json:"mac,omitempty" protobuf:"bytes,4,opt,name=mac"`
	// InterfaceName is the interface's name inside the guest, such as eth0.
	// +optional
	InterfaceName string `json:"interfaceName,omitempty" protobuf:"bytes,5,opt,name=interfaceName"`
	// InfoSource says where the data came from, as a comma-separated list of domain, guest-agent.
	// +optional
	InfoSource string `json:"infoSource,omitempty" protobuf:"bytes,6,opt,name=infoSource"`
	// PodInterfaceName is the interface of the launcher Pod the guest's interface is bound to.
	// +optional
	PodInterfaceName string `json:"podInterfaceName,omitempty" protobuf:"bytes,7,opt,name=podInterfaceName"`
	// QueueCount is the number of the interface's queues.
	// +optional
	QueueCount int32 `json:"queueCount,omitempty" protobuf:"varint,8,opt,name=queueCount"`
	// LinkState is the link's state: up or down.
	// +optional
	LinkState string `json:"linkState,omitempty" protobuf:"bytes,9,opt,name=linkState"`
}

// VirtualMachineInstanceGuestOSInfo describes the guest operating system, as its guest agent reports it.
type VirtualMachineInstanceGuestOSInfo struct {
	// Name of the operating system, such as "Fedora Linux".
	// +optional
	Name string `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
	// KernelRelease is the kernel release, such as "6.8.0-45-generic".
	// +optional
	KernelRelease string `json:"kernelRelease,omitempty" protobuf:"bytes,2,opt,name=kernelRelease"`
	// Version of the operating system.
	// +optional
	Version string `json:"version,omitempty" protobuf:"bytes,3,opt,name=version"`
	// PrettyName is the human-friendly name and version of the operating system.
	// +optional
	PrettyName string `json:"prettyName,omitempty" protobuf:"bytes,4,opt,name=prettyName"`
	// VersionID is the machine-readable version of the operating system, such as "41".
	// +optional
	VersionID string `json:"versionId,omitempty" protobuf:"bytes,5,opt,name=versionId"`
	// KernelVersion is the kernel build version string.
	// +optional
	KernelVersion string `json:"kernelVersion,omitempty" protobuf:"bytes,6,opt,name=kernelVersion"`
	// Machine is the guest's hardware architecture, such as x86_64.
	// +optional
	Machine string `json:"machine,omitempty" protobuf:"bytes,7,opt,name=machine"`
	// ID is the machine-readable identifier of the operating system, such as "fedora".
	// +optional
	ID string `json:"id,omitempty" protobuf:"bytes,8,opt,name=id"`
}
