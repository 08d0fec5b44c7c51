package v1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// VirtualMachineInstanceMigration asks for a running VMI to be live-migrated to another node.
// Deleting it while the migration runs aborts the migration and leaves the VMI on its source node.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachineInstanceMigration struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Spec names the VMI to migrate.
	Spec VirtualMachineInstanceMigrationSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	// Status is the observed progress of the migration. It is written by Vireo only.
	// +optional
	Status VirtualMachineInstanceMigrationStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// VirtualMachineInstanceMigrationList is a list of VirtualMachineInstanceMigrations.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachineInstanceMigrationList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Items are the VirtualMachineInstanceMigrations in the list.
	Items []VirtualMachineInstanceMigration `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// VirtualMachineInstanceMigrationSpec is the desired migration.
type VirtualMachineInstanceMigrationSpec struct {
	// VMIName is the name of the VirtualMachineInstance to migrate, in the migration's namespace.
	// The VMI must be running and have the LiveMigratable condition.
	VMIName string `json:"vmiName,omitempty" protobuf:"bytes,1,opt,name=vmiName"`
	// AddedNodeSelector narrows where the target may run: its labels are added to the VMI's
	// node selector for the target launcher Pod (it cannot widen placement). Naming the VMI's
	// own node moves it to a new launcher on that node (Vireo's in-place migration).
	// +optional
	AddedNodeSelector map[string]string `json:"addedNodeSelector,omitempty" protobuf:"bytes,2,rep,name=addedNodeSelector"`
}

// VirtualMachineInstanceMigrationPhase is the lifecycle state of a migration.
type VirtualMachineInstanceMigrationPhase string

const (
	// MigrationPhaseUnset is the phase of a migration that has not been processed yet.
	MigrationPhaseUnset VirtualMachineInstanceMigrationPhase = ""
	// MigrationPending means the migration was accepted and waits for a target pod to be created.
	MigrationPending VirtualMachineInstanceMigrationPhase = "Pending"
	// MigrationScheduling means the target pod exists but is not scheduled and running yet.
	MigrationScheduling VirtualMachineInstanceMigrationPhase = "Scheduling"
	// MigrationScheduled means the target pod is running on the target node.
	MigrationScheduled VirtualMachineInstanceMigrationPhase = "Scheduled"
	// MigrationPreparingTarget means the target node is getting ready to receive the guest.
	MigrationPreparingTarget VirtualMachineInstanceMigrationPhase = "PreparingTarget"
	// MigrationTargetReady means the target node waits for the guest's state to arrive.
	MigrationTargetReady VirtualMachineInstanceMigrationPhase = "TargetReady"
	// MigrationRunning means the guest's state is being transferred.
	MigrationRunning VirtualMachineInstanceMigrationPhase = "Running"
	// MigrationSucceeded means the guest now runs on the target node.
	MigrationSucceeded VirtualMachineInstanceMigrationPhase = "Succeeded"
	// MigrationFailed means the migration failed or was aborted; the guest still runs on the source node.
	MigrationFailed VirtualMachineInstanceMigrationPhase = "Failed"
)

// VirtualMachineInstanceMigrationConditionType names a condition of a migration.
type VirtualMachineInstanceMigrationConditionType string

const (
	// VirtualMachineInstanceMigrationAbortRequested is True once an abort of the migration was requested.
	VirtualMachineInstanceMigrationAbortRequested VirtualMachineInstanceMigrationConditionType = "migrationAbortRequested"
	// VirtualMachineInstanceMigrationRejectedByResourceQuota is True while the target pod cannot be
	// created because it would exceed a ResourceQuota.
	VirtualMachineInstanceMigrationRejectedByResourceQuota VirtualMachineInstanceMigrationConditionType = "migrationRejectedByResourceQuota"
)

// VirtualMachineInstanceMigrationCondition is one observed condition of a migration.
type VirtualMachineInstanceMigrationCondition struct {
	// Type of the condition.
	Type VirtualMachineInstanceMigrationConditionType `json:"type" protobuf:"bytes,1,opt,name=type,casttype=VirtualMachineInstanceMigrationConditionType"`
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

// VirtualMachineInstanceMigrationPhaseTransitionTimestamp records when a migration entered a phase.
type VirtualMachineInstanceMigrationPhaseTransitionTimestamp struct {
	// Phase the migration entered.
	// +optional
	Phase VirtualMachineInstanceMigrationPhase `json:"phase,omitempty" protobuf:"bytes,1,opt,name=phase,casttype=VirtualMachineInstanceMigrationPhase"`
	// PhaseTransitionTimestamp is when the migration entered the phase.
	// +optional
	PhaseTransitionTimestamp metav1.Time `json:"phaseTransitionTimestamp,omitempty" protobuf:"bytes,2,opt,name=phaseTransitionTimestamp"`
}

// VirtualMachineInstanceMigrationStatus is the observed state of a migration.
type VirtualMachineInstanceMigrationStatus struct {
	// Phase is the lifecycle state of the migration.
	// +optional
	Phase VirtualMachineInstanceMigrationPhase `json:"phase,omitempty" protobuf:"bytes,1,opt,name=phase,casttype=VirtualMachineInstanceMigrationPhase"`
	// PhaseTransitionTimestamps records when the migration entered each phase, oldest first.
	// +optional
	// +listType=atomic
	PhaseTransitionTimestamps []VirtualMachineInstanceMigrationPhaseTransitionTimestamp `json:"phaseTransitionTimestamps,omitempty" protobuf:"bytes,2,rep,name=phaseTransitionTimestamps"`
	// MigrationState is a copy of the VMI's migration state for this migration.
	// +optional
	MigrationState *VirtualMachineInstanceMigrationState `json:"migrationState,omitempty" protobuf:"bytes,3,opt,name=migrationState"`
	// Conditions are the current observed conditions of the migration, one per type.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []VirtualMachineInstanceMigrationCondition `json:"conditions,omitempty" protobuf:"bytes,4,rep,name=conditions"`
}

// MigrationAbortStatus is the outcome of a request to abort a migration.
type MigrationAbortStatus string

const (
	// MigrationAbortInProgress means the abort is under way.
	MigrationAbortInProgress MigrationAbortStatus = "Aborting"
	// MigrationAbortSucceeded means the migration was aborted.
	MigrationAbortSucceeded MigrationAbortStatus = "Succeeded"
	// MigrationAbortFailed means the migration could not be aborted (it may have completed).
	MigrationAbortFailed MigrationAbortStatus = "Failed"
)

// MigrationMode is how guest memory is being transferred.
type MigrationMode string

const (
	// MigrationPreCopy copies memory while the guest keeps running on the source.
	MigrationPreCopy MigrationMode = "PreCopy"
	// MigrationPostCopy runs the guest on the target and fetches the remaining memory on demand.
	MigrationPostCopy MigrationMode = "PostCopy"
	// MigrationPaused copies memory while the guest is paused.
	MigrationPaused MigrationMode = "Paused"
)

// VirtualMachineInstanceMigrationState describes a live migration of a VMI, as the controller and
// node agents see it.
type VirtualMachineInstanceMigrationState struct {
	// StartTimestamp is when the transfer of the guest started.
	// +optional
	// +nullable
	StartTimestamp *metav1.Time `json:"startTimestamp,omitempty" protobuf:"bytes,1,opt,name=startTimestamp"`
	// EndTimestamp is when the migration ended, successfully or not.
	// +optional
	// +nullable
	EndTimestamp *metav1.Time `json:"endTimestamp,omitempty" protobuf:"bytes,2,opt,name=endTimestamp"`
	// SourceNode is the node the VMI is migrating from.
	// +optional
	SourceNode string `json:"sourceNode,omitempty" protobuf:"bytes,3,opt,name=sourceNode"`
	// SourcePod is the launcher pod the VMI is migrating from.
	// +optional
	SourcePod string `json:"sourcePod,omitempty" protobuf:"bytes,4,opt,name=sourcePod"`
	// TargetNode is the node the VMI is migrating to.
	// +optional
	TargetNode string `json:"targetNode,omitempty" protobuf:"bytes,5,opt,name=targetNode"`
	// TargetPod is the launcher pod the VMI is migrating to.
	// +optional
	TargetPod string `json:"targetPod,omitempty" protobuf:"bytes,6,opt,name=targetPod"`
	// TargetNodeAddress is the address of the target node agent's migration proxy.
	// +optional
	TargetNodeAddress string `json:"targetNodeAddress,omitempty" protobuf:"bytes,7,opt,name=targetNodeAddress"`
	// TargetNodeDomainDetected is true once the target node has seen the guest start there.
	// +optional
	TargetNodeDomainDetected bool `json:"targetNodeDomainDetected,omitempty" protobuf:"varint,8,opt,name=targetNodeDomainDetected"`
	// Completed is true once the migration completed.
	// +optional
	Completed bool `json:"completed,omitempty" protobuf:"varint,9,opt,name=completed"`
	// Failed is true when the migration failed.
	// +optional
	Failed bool `json:"failed,omitempty" protobuf:"varint,10,opt,name=failed"`
	// FailureReason says why the migration failed.
	// +optional
	FailureReason string `json:"failureReason,omitempty" protobuf:"bytes,11,opt,name=failureReason"`
	// AbortRequested is true once an abort of the migration was requested.
	// +optional
	AbortRequested bool `json:"abortRequested,omitempty" protobuf:"varint,12,opt,name=abortRequested"`
	// AbortStatus is the outcome of the abort: Aborting, Succeeded or Failed.
	// +optional
	AbortStatus MigrationAbortStatus `json:"abortStatus,omitempty" protobuf:"bytes,13,opt,name=abortStatus,casttype=MigrationAbortStatus"`
	// MigrationUID is the UID of the VirtualMachineInstanceMigration this state belongs to.
	// +optional
	MigrationUID types.UID `json:"migrationUid,omitempty" protobuf:"bytes,14,opt,name=migrationUid,casttype=k8s.io/apimachinery/pkg/types.UID"`
	// Mode is how memory is being transferred: PreCopy, PostCopy or Paused.
	// +optional
	Mode MigrationMode `json:"mode,omitempty" protobuf:"bytes,15,opt,name=mode,casttype=MigrationMode"`
	// MigrationPolicyName is the MigrationPolicy that applied to this migration, if any.
	// +optional
	MigrationPolicyName *string `json:"migrationPolicyName,omitempty" protobuf:"bytes,16,opt,name=migrationPolicyName"`
	// MigrationConfiguration is the configuration this migration runs with: the cluster's
	// settings when it started, overridden by its MigrationPolicy's. allowPostCopy is false when
	// the target could not run post-copy.
	// +optional
	MigrationConfiguration *MigrationConfiguration `json:"migrationConfiguration,omitempty" protobuf:"bytes,17,opt,name=migrationConfiguration"`
	// The fields below are those of KubeVirt's migration state that Vireo does not write (its
	// node agents report the target through the fields above); they are kept as written.

	// TargetNodeDomainReadyTimestamp is when the guest became ready on the target.
	// +optional
	TargetNodeDomainReadyTimestamp *metav1.Time `json:"targetNodeDomainReadyTimestamp,omitempty" protobuf:"bytes,18,opt,name=targetNodeDomainReadyTimestamp"`
	// TargetDirectMigrationNodePorts are the target's migration ports.
	// +optional
	TargetDirectMigrationNodePorts map[string]int32 `json:"targetDirectMigrationNodePorts,omitempty" protobuf:"bytes,19,rep,name=targetDirectMigrationNodePorts"`
	// TargetAttachmentPodUID is the UID of the target's hotplug attachment Pod.
	// +optional
	TargetAttachmentPodUID types.UID `json:"targetAttachmentPodUID,omitempty" protobuf:"bytes,20,opt,name=targetAttachmentPodUID,casttype=k8s.io/apimachinery/pkg/types.UID"`
	// TargetCPUSet are the target's dedicated CPUs.
	// +optional
	// +listType=atomic
	TargetCPUSet []int32 `json:"targetCPUSet,omitempty" protobuf:"varint,21,rep,name=targetCPUSet"`
	// TargetNodeTopology is the target's CPU topology.
	// +optional
	TargetNodeTopology string `json:"targetNodeTopology,omitempty" protobuf:"bytes,22,opt,name=targetNodeTopology"`
	// SourcePersistentStatePVCName is the source's persistent state claim.
	// +optional
	SourcePersistentStatePVCName string `json:"sourcePersistentStatePVCName,omitempty" protobuf:"bytes,23,opt,name=sourcePersistentStatePVCName"`
	// TargetPersistentStatePVCName is the target's persistent state claim.
	// +optional
	TargetPersistentStatePVCName string `json:"targetPersistentStatePVCName,omitempty" protobuf:"bytes,24,opt,name=targetPersistentStatePVCName"`
	// SourceState is the source's side of a migration between clusters.
	// +optional
	SourceState *VirtualMachineInstanceMigrationSourceState `json:"sourceState,omitempty" protobuf:"bytes,25,opt,name=sourceState"`
	// TargetState is the target's side of a migration between clusters.
	// +optional
	TargetState *VirtualMachineInstanceMigrationTargetState `json:"targetState,omitempty" protobuf:"bytes,26,opt,name=targetState"`
	// MigrationNetworkType is the network the migration runs over.
	// +optional
	MigrationNetworkType string `json:"migrationNetworkType,omitempty" protobuf:"bytes,27,opt,name=migrationNetworkType"`
	// TargetMemoryOverhead is the target launcher's memory overhead.
	// +optional
	TargetMemoryOverhead *resource.Quantity `json:"targetMemoryOverhead,omitempty" protobuf:"bytes,28,opt,name=targetMemoryOverhead"`
}

// VirtualMachineInstanceCommonMigrationState is one side of a migration between clusters.
type VirtualMachineInstanceCommonMigrationState struct {
	// Node is the side's node.
	// +optional
	Node string `json:"node,omitempty" protobuf:"bytes,1,opt,name=node"`
	// Pod is the side's launcher Pod.
	// +optional
	Pod string `json:"pod,omitempty" protobuf:"bytes,2,opt,name=pod"`
	// MigrationUID is the side's migration.
	// +optional
	MigrationUID types.UID `json:"migrationUID,omitempty" protobuf:"bytes,3,opt,name=migrationUID,casttype=k8s.io/apimachinery/pkg/types.UID"`
	// DomainName is the side's domain.
	// +optional
	DomainName *string `json:"domainName,omitempty" protobuf:"bytes,4,opt,name=domainName"`
	// DomainNamespace is the side's namespace.
	// +optional
	DomainNamespace *string `json:"domainNamespace,omitempty" protobuf:"bytes,5,opt,name=domainNamespace"`
	// SyncAddress is the side's synchronisation address.
	// +optional
	SyncAddress *string `json:"syncAddress,omitempty" protobuf:"bytes,6,opt,name=syncAddress"`
	// PersistentStatePVCName is the side's persistent state claim.
	// +optional
	PersistentStatePVCName *string `json:"persistentStatePVCName,omitempty" protobuf:"bytes,7,opt,name=persistentStatePVCName"`
	// SelinuxContext is the side's SELinux context.
	// +optional
	SelinuxContext string `json:"selinuxContext,omitempty" protobuf:"bytes,8,opt,name=selinuxContext"`
	// VirtualMachineInstanceUID is the side's VMI.
	// +optional
	VirtualMachineInstanceUID *types.UID `json:"virtualMachineInstanceUID,omitempty" protobuf:"bytes,9,opt,name=virtualMachineInstanceUID,casttype=k8s.io/apimachinery/pkg/types.UID"`
}

// VirtualMachineInstanceMigrationSourceState is the source's side of a migration.
type VirtualMachineInstanceMigrationSourceState struct {
	VirtualMachineInstanceCommonMigrationState `json:",inline" protobuf:"bytes,1,opt,name=virtualMachineInstanceCommonMigrationState"`
	// NodeSelectors of the source.
	// +optional
	NodeSelectors map[string]string `json:"nodeSelectors,omitempty" protobuf:"bytes,2,rep,name=nodeSelectors"`
}

// VirtualMachineInstanceMigrationTargetState is the target's side of a migration.
type VirtualMachineInstanceMigrationTargetState struct {
	VirtualMachineInstanceCommonMigrationState `json:",inline" protobuf:"bytes,1,opt,name=virtualMachineInstanceCommonMigrationState"`
	// DomainReadyTimestamp is when the guest became ready there.
	// +optional
	DomainReadyTimestamp *metav1.Time `json:"domainReadyTimestamp,omitempty" protobuf:"bytes,2,opt,name=domainReadyTimestamp"`
	// DomainDetected is true once the guest was seen there.
	// +optional
	DomainDetected bool `json:"domainDetected,omitempty" protobuf:"varint,3,opt,name=domainDetected"`
	// NodeAddress is the target's migration address.
	// +optional
	NodeAddress *string `json:"nodeAddress,omitempty" protobuf:"bytes,4,opt,name=nodeAddress"`
	// DirectMigrationNodePorts are the target's migration ports.
	// +optional
	DirectMigrationNodePorts map[string]int32 `json:"directMigrationNodePorts,omitempty" protobuf:"bytes,5,rep,name=directMigrationNodePorts"`
	// AttachmentPodUID is the target's hotplug attachment Pod.
	// +optional
	AttachmentPodUID *types.UID `json:"attachmentPodUID,omitempty" protobuf:"bytes,6,opt,name=attachmentPodUID,casttype=k8s.io/apimachinery/pkg/types.UID"`
	// CPUSet are the target's dedicated CPUs.
	// +optional
	// +listType=atomic
	CPUSet []int32 `json:"cpuSet,omitempty" protobuf:"varint,7,rep,name=cpuSet"`
	// NodeTopology is the target's CPU topology.
	// +optional
	NodeTopology *string `json:"nodeTopology,omitempty" protobuf:"bytes,8,opt,name=nodeTopology"`
}
