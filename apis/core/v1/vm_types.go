package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
)

// VirtualMachine is a virtual machine that persists across restarts: it creates, deletes and
// re-creates a VirtualMachineInstance from its template according to its run strategy.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachine struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Spec is the desired virtual machine: its run strategy, its VMI template and the DataVolumes it owns.
	Spec VirtualMachineSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	// Status is what the system last observed about the VirtualMachine. It is written by Vireo only.
	// +optional
	Status VirtualMachineStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// VirtualMachineList is a list of VirtualMachines.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachineList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Items are the VirtualMachines in the list.
	Items []VirtualMachine `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// VirtualMachineRunStrategy is when a VirtualMachine keeps a VMI running.
type VirtualMachineRunStrategy string

const (
	// RunStrategyAlways keeps a VMI running at all times, re-creating it whenever it stops or fails.
	RunStrategyAlways VirtualMachineRunStrategy = "Always"
	// RunStrategyRerunOnFailure re-creates the VMI when it fails, but not when the guest shuts down cleanly.
	RunStrategyRerunOnFailure VirtualMachineRunStrategy = "RerunOnFailure"
	// RunStrategyManual creates and deletes the VMI only on start, stop and restart requests.
	RunStrategyManual VirtualMachineRunStrategy = "Manual"
	// RunStrategyHalted keeps the VM stopped: no VMI exists.
	RunStrategyHalted VirtualMachineRunStrategy = "Halted"
	// RunStrategyOnce runs the VMI once and never re-creates it after it stops.
	RunStrategyOnce VirtualMachineRunStrategy = "Once"
)

// VirtualMachineSpec is the desired state of a VirtualMachine.
type VirtualMachineSpec struct {
	// RunStrategy is when a VMI is kept running: Always, RerunOnFailure, Manual, Halted or Once.
	// Mutually exclusive with running.
	// +optional
	RunStrategy *VirtualMachineRunStrategy `json:"runStrategy,omitempty" protobuf:"bytes,1,opt,name=runStrategy,casttype=VirtualMachineRunStrategy"`
	// Running is the older form of runStrategy: true means Always, false means Halted.
	// Mutually exclusive with runStrategy.
	// +optional
	Running *bool `json:"running,omitempty" protobuf:"varint,2,opt,name=running"`
	// Template is the VirtualMachineInstance created when the VM starts. Its labels and annotations
	// are copied to the VMI.
	Template *VirtualMachineInstanceTemplateSpec `json:"template" protobuf:"bytes,3,opt,name=template"`
	// DataVolumeTemplates are DataVolumes created with, and owned by, the VM; the template's volumes
	// can refer to them by name.
	// +optional
	// +listType=atomic
	DataVolumeTemplates []DataVolumeTemplateSpec `json:"dataVolumeTemplates,omitempty" protobuf:"bytes,4,rep,name=dataVolumeTemplates"`
	// Instancetype names the VirtualMachineInstancetype (or cluster instancetype) whose CPU and
	// memory the VM takes.
	// +optional
	Instancetype *InstancetypeMatcher `json:"instancetype,omitempty" protobuf:"bytes,5,opt,name=instancetype"`
	// Preference names the VirtualMachinePreference (or cluster preference) that fills what the
	// VM leaves unset.
	// +optional
	Preference *PreferenceMatcher `json:"preference,omitempty" protobuf:"bytes,6,opt,name=preference"`
	// UpdateVolumesStrategy is what a change of the template's volumes does: Replacement (on the
	// next start) or Migration.
	// +optional
	UpdateVolumesStrategy *UpdateVolumesStrategy `json:"updateVolumesStrategy,omitempty" protobuf:"bytes,7,opt,name=updateVolumesStrategy,casttype=UpdateVolumesStrategy"`
}

// UpdateVolumesStrategy is what a change of a VM's volumes does: Replacement or Migration.
type UpdateVolumesStrategy string

// InferFromVolumeFailurePolicy is what a failed inference from a volume does: Reject or Ignore.
type InferFromVolumeFailurePolicy string

// The failure policies of inference.
const (
	// RejectInferFromVolumeFailure refuses the VM (the default).
	RejectInferFromVolumeFailure InferFromVolumeFailurePolicy = "Reject"
	// IgnoreInferFromVolumeFailure drops the matcher when the volume names nothing.
	IgnoreInferFromVolumeFailure InferFromVolumeFailurePolicy = "Ignore"
)

// InstancetypeMatcher names an instancetype.
type InstancetypeMatcher struct {
	// Name of the instancetype.
	// +optional
	Name string `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
	// Kind is VirtualMachineInstancetype or VirtualMachineClusterInstancetype (the default).
	// +optional
	Kind string `json:"kind,omitempty" protobuf:"bytes,2,opt,name=kind"`
	// RevisionName is the ControllerRevision holding the version of the instancetype in use.
	// +optional
	RevisionName string `json:"revisionName,omitempty" protobuf:"bytes,3,opt,name=revisionName"`
	// InferFromVolume names a volume whose labels name the instancetype.
	// +optional
	InferFromVolume string `json:"inferFromVolume,omitempty" protobuf:"bytes,4,opt,name=inferFromVolume"`
	// InferFromVolumeFailurePolicy is what a failed inference does: Reject (the default) or Ignore.
	// +optional
	InferFromVolumeFailurePolicy *InferFromVolumeFailurePolicy `json:"inferFromVolumeFailurePolicy,omitempty" protobuf:"bytes,5,opt,name=inferFromVolumeFailurePolicy,casttype=InferFromVolumeFailurePolicy"`
}

// PreferenceMatcher names a preference.
type PreferenceMatcher struct {
	// Name of the preference.
	// +optional
	Name string `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
	// Kind is VirtualMachinePreference or VirtualMachineClusterPreference (the default).
	// +optional
	Kind string `json:"kind,omitempty" protobuf:"bytes,2,opt,name=kind"`
	// RevisionName is the ControllerRevision holding the version of the preference in use.
	// +optional
	RevisionName string `json:"revisionName,omitempty" protobuf:"bytes,3,opt,name=revisionName"`
	// InferFromVolume names a volume whose labels name the preference.
	// +optional
	InferFromVolume string `json:"inferFromVolume,omitempty" protobuf:"bytes,4,opt,name=inferFromVolume"`
	// InferFromVolumeFailurePolicy is what a failed inference does: Reject (the default) or Ignore.
	// +optional
	InferFromVolumeFailurePolicy *InferFromVolumeFailurePolicy `json:"inferFromVolumeFailurePolicy,omitempty" protobuf:"bytes,5,opt,name=inferFromVolumeFailurePolicy,casttype=InferFromVolumeFailurePolicy"`
}

// VirtualMachineInstanceTemplateSpec is the template a VirtualMachine creates its VMI from.
type VirtualMachineInstanceTemplateSpec struct {
	// Metadata of the VMI to create; labels and annotations are copied to it.
	// +optional
	// +nullable
	ObjectMeta metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Spec of the VMI to create.
	// +optional
	Spec VirtualMachineInstanceSpec `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
}

// DataVolumeTemplateSpec is a DataVolume that a VirtualMachine creates and owns.
type DataVolumeTemplateSpec struct {
	// TypeMeta is accepted so that templates written as full DataVolume objects (with apiVersion and
	// kind) keep working; it is otherwise ignored.
	// +optional
	metav1.TypeMeta `json:",inline"`
	// Metadata of the DataVolume to create; its name is what the template's volumes refer to.
	// +optional
	// +nullable
	ObjectMeta metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Spec of the DataVolume to create.
	Spec cdiv1beta1.DataVolumeSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	// Status is accepted and ignored, as by KubeVirt: manifests exported from a cluster (and
	// KubeVirt's own client) carry it. The DataVolume's real status is on the DataVolume.
	// +optional
	Status *DataVolumeTemplateDummyStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// DataVolumeTemplateDummyStatus is the placeholder status of a DataVolume template; it has no fields.
type DataVolumeTemplateDummyStatus struct{}

// VirtualMachinePrintableStatus is a one-word summary of a VirtualMachine's state, shown by kubectl get.
type VirtualMachinePrintableStatus string

const (
	// VirtualMachineStatusStopped means no VMI exists, or it has finished.
	VirtualMachineStatusStopped VirtualMachinePrintableStatus = "Stopped"
	// VirtualMachineStatusProvisioning means the VM's DataVolumes are still being populated.
	VirtualMachineStatusProvisioning VirtualMachinePrintableStatus = "Provisioning"
	// VirtualMachineStatusStarting means a VMI exists but is not running yet.
	VirtualMachineStatusStarting VirtualMachinePrintableStatus = "Starting"
	// VirtualMachineStatusRunning means the VMI is running.
	VirtualMachineStatusRunning VirtualMachinePrintableStatus = "Running"
	// VirtualMachineStatusPaused means the VMI is paused.
	VirtualMachineStatusPaused VirtualMachinePrintableStatus = "Paused"
	// VirtualMachineStatusStopping means the VMI is shutting down because the VM was stopped.
	VirtualMachineStatusStopping VirtualMachinePrintableStatus = "Stopping"
	// VirtualMachineStatusTerminating means the VM is being deleted.
	VirtualMachineStatusTerminating VirtualMachinePrintableStatus = "Terminating"
	// VirtualMachineStatusCrashLoopBackOff means VMIs keep failing and the next start is delayed.
	VirtualMachineStatusCrashLoopBackOff VirtualMachinePrintableStatus = "CrashLoopBackOff"
	// VirtualMachineStatusMigrating means the VMI is being live-migrated.
	VirtualMachineStatusMigrating VirtualMachinePrintableStatus = "Migrating"
	// VirtualMachineStatusUnknown means the VM's state could not be determined.
	VirtualMachineStatusUnknown VirtualMachinePrintableStatus = "Unknown"
	// VirtualMachineStatusUnschedulable means the VMI's launcher pod cannot be scheduled.
	VirtualMachineStatusUnschedulable VirtualMachinePrintableStatus = "ErrorUnschedulable"
	// VirtualMachineStatusErrImagePull means a container image of the VMI could not be pulled.
	VirtualMachineStatusErrImagePull VirtualMachinePrintableStatus = "ErrImagePull"
	// VirtualMachineStatusImagePullBackOff means pulling a container image of the VMI keeps failing and is delayed.
	VirtualMachineStatusImagePullBackOff VirtualMachinePrintableStatus = "ImagePullBackOff"
	// VirtualMachineStatusPvcNotFound means a PersistentVolumeClaim the VMI uses does not exist.
	VirtualMachineStatusPvcNotFound VirtualMachinePrintableStatus = "ErrorPvcNotFound"
	// VirtualMachineStatusDataVolumeError means a DataVolume the VM uses has failed.
	VirtualMachineStatusDataVolumeError VirtualMachinePrintableStatus = "DataVolumeError"
	// VirtualMachineStatusWaitingForVolumeBinding means a PersistentVolumeClaim the VM uses is not bound yet.
	VirtualMachineStatusWaitingForVolumeBinding VirtualMachinePrintableStatus = "WaitingForVolumeBinding"
	// VirtualMachineStatusWaitingForReceiver means the VM waits to receive an incoming migration.
	VirtualMachineStatusWaitingForReceiver VirtualMachinePrintableStatus = "WaitingForReceiver"
)

// VirtualMachineConditionType names a condition of a VirtualMachine.
type VirtualMachineConditionType string

const (
	// VirtualMachineReady is True when the VM's VMI is running and ready.
	VirtualMachineReady VirtualMachineConditionType = "Ready"
	// VirtualMachineFailure is True when the VM controller failed to act on the VM; the message says why.
	VirtualMachineFailure VirtualMachineConditionType = "Failure"
	// VirtualMachinePaused is True while the VM's VMI is paused.
	VirtualMachinePaused VirtualMachineConditionType = "Paused"
)

// VirtualMachineCondition is one observed condition of a VirtualMachine.
type VirtualMachineCondition struct {
	// Type of the condition, such as Ready or Failure.
	Type VirtualMachineConditionType `json:"type" protobuf:"bytes,1,opt,name=type,casttype=VirtualMachineConditionType"`
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

// StateChangeRequestAction is an action requested of the VM controller.
type StateChangeRequestAction string

const (
	// StartRequest asks for a VMI to be created.
	StartRequest StateChangeRequestAction = "Start"
	// StopRequest asks for the VMI to be deleted.
	StopRequest StateChangeRequestAction = "Stop"
)

// Data of a Start request (KubeVirt's): StartRequestDataPausedKey set to
// StartRequestDataPausedTrue creates the VMI with startStrategy Paused.
const (
	StartRequestDataPausedKey  = "paused"
	StartRequestDataPausedTrue = "true"
)

// VirtualMachineStateChangeRequest is a pending start or stop of a VirtualMachine, written by the
// start, stop and restart subresources and consumed by the VM controller.
type VirtualMachineStateChangeRequest struct {
	// Action is Start or Stop.
	Action StateChangeRequestAction `json:"action" protobuf:"bytes,1,opt,name=action,casttype=StateChangeRequestAction"`
	// Data carries extra parameters of the request.
	// +optional
	Data map[string]string `json:"data,omitempty" protobuf:"bytes,2,rep,name=data"`
	// UID, on a Stop request, is the UID of the VMI to stop, so that a newer VMI is left alone.
	// +optional
	UID *types.UID `json:"uid,omitempty" protobuf:"bytes,3,opt,name=uid,casttype=k8s.io/apimachinery/pkg/types.UID"`
}

// VirtualMachineStartFailure tracks VMIs that failed before reaching Running, to back off restarts.
type VirtualMachineStartFailure struct {
	// ConsecutiveFailCount is how many VMIs in a row failed to start.
	// +optional
	ConsecutiveFailCount int32 `json:"consecutiveFailCount,omitempty" protobuf:"varint,1,opt,name=consecutiveFailCount"`
	// LastFailedVMIUID is the UID of the VMI whose failure was counted last.
	// +optional
	LastFailedVMIUID types.UID `json:"lastFailedVMIUID,omitempty" protobuf:"bytes,2,opt,name=lastFailedVMIUID,casttype=k8s.io/apimachinery/pkg/types.UID"`
	// RetryAfterTimestamp is the earliest time the next VMI will be created.
	// +optional
	// +nullable
	RetryAfterTimestamp *metav1.Time `json:"retryAfterTimestamp,omitempty" protobuf:"bytes,3,opt,name=retryAfterTimestamp"`
}

// VirtualMachineStatus is the observed state of a VirtualMachine.
type VirtualMachineStatus struct {
	// PrintableStatus is a one-word summary of the VM's state, shown by kubectl get.
	// +optional
	PrintableStatus VirtualMachinePrintableStatus `json:"printableStatus,omitempty" protobuf:"bytes,1,opt,name=printableStatus,casttype=VirtualMachinePrintableStatus"`
	// Created is true when a VMI of this VM exists.
	// +optional
	Created bool `json:"created,omitempty" protobuf:"varint,2,opt,name=created"`
	// Ready is true when the VMI of this VM is running and ready.
	// +optional
	Ready bool `json:"ready,omitempty" protobuf:"varint,3,opt,name=ready"`
	// Conditions are the current observed conditions of the VM, one per type.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []VirtualMachineCondition `json:"conditions,omitempty" protobuf:"bytes,4,rep,name=conditions"`
	// StateChangeRequests are start and stop requests not yet carried out, oldest first.
	// +optional
	// +listType=atomic
	StateChangeRequests []VirtualMachineStateChangeRequest `json:"stateChangeRequests,omitempty" protobuf:"bytes,5,rep,name=stateChangeRequests"`
	// StartFailure tracks consecutive failed starts for the crash-loop back-off; unset after a VMI reaches Running.
	// +optional
	StartFailure *VirtualMachineStartFailure `json:"startFailure,omitempty" protobuf:"bytes,6,opt,name=startFailure"`
	// ObservedGeneration is the metadata.generation of the VM that the current VMI was created from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty" protobuf:"varint,7,opt,name=observedGeneration"`
	// DesiredGeneration is the metadata.generation of the VM that the controller last acted on.
	// +optional
	DesiredGeneration int64 `json:"desiredGeneration,omitempty" protobuf:"varint,8,opt,name=desiredGeneration"`
	// RunStrategy is the run strategy the controller last applied; a VM whose strategy just
	// changed to RerunOnFailure or Once starts once.
	// +optional
	RunStrategy VirtualMachineRunStrategy `json:"runStrategy,omitempty" protobuf:"bytes,9,opt,name=runStrategy,casttype=VirtualMachineRunStrategy"`
	// InstancetypeRef is the instancetype the VM's current VMI was made with, and the
	// ControllerRevision that holds the version used.
	// +optional
	InstancetypeRef *InstancetypeStatusRef `json:"instancetypeRef,omitempty" protobuf:"bytes,10,opt,name=instancetypeRef"`
	// PreferenceRef is the preference the VM's current VMI was made with, and its revision.
	// +optional
	PreferenceRef *InstancetypeStatusRef `json:"preferenceRef,omitempty" protobuf:"bytes,11,opt,name=preferenceRef"`
	// SnapshotInProgress names the snapshot being taken of the VM.
	// +optional
	SnapshotInProgress *string `json:"snapshotInProgress,omitempty" protobuf:"bytes,12,opt,name=snapshotInProgress"`
	// RestoreInProgress names the restore being made of the VM.
	// +optional
	RestoreInProgress *string `json:"restoreInProgress,omitempty" protobuf:"bytes,13,opt,name=restoreInProgress"`
	// VolumeRequests are pending hotplugs and unplugs of volumes.
	// +optional
	// +listType=atomic
	VolumeRequests []VirtualMachineVolumeRequest `json:"volumeRequests,omitempty" protobuf:"bytes,14,rep,name=volumeRequests"`
	// VolumeSnapshotStatuses say which volumes can be snapshotted.
	// +optional
	// +listType=atomic
	VolumeSnapshotStatuses []VolumeSnapshotStatus `json:"volumeSnapshotStatuses,omitempty" protobuf:"bytes,15,rep,name=volumeSnapshotStatuses"`
	// MemoryDumpRequest is a requested dump of the guest's memory.
	// +optional
	MemoryDumpRequest *VirtualMachineMemoryDumpRequest `json:"memoryDumpRequest,omitempty" protobuf:"bytes,16,opt,name=memoryDumpRequest"`
	// VolumeUpdateState is the state of a change of the VM's volumes.
	// +optional
	VolumeUpdateState *VolumeUpdateState `json:"volumeUpdateState,omitempty" protobuf:"bytes,17,opt,name=volumeUpdateState"`
	// ChangedBlockTracking is the state of changed block tracking.
	// +optional
	ChangedBlockTracking *ChangedBlockTrackingStatus `json:"changedBlockTracking,omitempty" protobuf:"bytes,18,opt,name=changedBlockTracking"`
}

// InstancetypeStatusRef names an instancetype or preference a VM uses and the captured version.
type InstancetypeStatusRef struct {
	// Name of the instancetype or preference.
	// +optional
	Name string `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
	// Kind of the instancetype or preference.
	// +optional
	Kind string `json:"kind,omitempty" protobuf:"bytes,2,opt,name=kind"`
	// ControllerRevisionRef names the ControllerRevision holding the version in use.
	// +optional
	ControllerRevisionRef *ControllerRevisionRef `json:"controllerRevisionRef,omitempty" protobuf:"bytes,3,opt,name=controllerRevisionRef"`
	// InferFromVolume is the volume the name was inferred from.
	// +optional
	InferFromVolume string `json:"inferFromVolume,omitempty" protobuf:"bytes,4,opt,name=inferFromVolume"`
	// InferFromVolumeFailurePolicy is what a failed inference did.
	// +optional
	InferFromVolumeFailurePolicy *InferFromVolumeFailurePolicy `json:"inferFromVolumeFailurePolicy,omitempty" protobuf:"bytes,5,opt,name=inferFromVolumeFailurePolicy,casttype=InferFromVolumeFailurePolicy"`
}

// ControllerRevisionRef names a ControllerRevision.
type ControllerRevisionRef struct {
	// Name of the ControllerRevision.
	// +optional
	Name string `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
}
