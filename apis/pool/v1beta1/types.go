package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	corev1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// RevisionLabel is set on a pool's VMs and their VMI templates: the revision of the pool's
// template they were made from (KubeVirt's label name).
const RevisionLabel = "kubevirt.io/vm-pool-revision-name"

// VirtualMachinePool keeps a number of VirtualMachines made from one template, named
// <pool>-<index> with the lowest free indexes: it creates VMs when fewer than spec.replicas
// match its selector, removes the surplus, and updates VMs made from an older template.
//
// +genclient
// +genclient:method=GetScale,verb=get,subresource=scale,result=k8s.io/api/autoscaling/v1.Scale
// +genclient:method=UpdateScale,verb=update,subresource=scale,input=k8s.io/api/autoscaling/v1.Scale,result=k8s.io/api/autoscaling/v1.Scale
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachinePool struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Spec is the number of VMs wanted, how to find them, their template and how they are
	// scaled in and updated.
	Spec VirtualMachinePoolSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	// Status is what the controller last observed: replicas, ready replicas, conditions
	// (ReplicaFailure, ReplicaPaused) and the selector, as a replica set's. It is written by
	// Vireo only.
	// +optional
	Status corev1.VirtualMachineInstanceReplicaSetStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// VirtualMachinePoolList is a list of VirtualMachinePools.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachinePoolList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Items are the pools in the list.
	Items []VirtualMachinePool `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// VirtualMachineTemplateSpec is the VirtualMachine a pool makes its VMs from.
type VirtualMachineTemplateSpec struct {
	// Metadata of the VMs: their labels and annotations.
	// +optional
	// +nullable
	ObjectMeta metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Spec of the VMs. Each VM's DataVolume templates get the VM's index appended to their
	// names (and the volumes that use them follow).
	Spec corev1.VirtualMachineSpec `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
}

// VirtualMachinePoolSpec is the desired state of a pool.
type VirtualMachinePoolSpec struct {
	// Replicas is the number of VMs wanted. Defaults to 1.
	// +optional
	Replicas *int32 `json:"replicas,omitempty" protobuf:"varint,1,opt,name=replicas"`
	// Selector finds the pool's VMs by their labels. It must match the template's labels.
	Selector *metav1.LabelSelector `json:"selector" protobuf:"bytes,2,opt,name=selector"`
	// VirtualMachineTemplate is the VM that new members are made from.
	VirtualMachineTemplate *VirtualMachineTemplateSpec `json:"virtualMachineTemplate" protobuf:"bytes,3,opt,name=virtualMachineTemplate"`
	// Paused stops the pool from creating, deleting and updating VMs.
	// +optional
	Paused bool `json:"paused,omitempty" protobuf:"varint,4,opt,name=paused"`
	// NameGeneration says which references of the template get the VM's index appended.
	// +optional
	NameGeneration *VirtualMachinePoolNameGeneration `json:"nameGeneration,omitempty" protobuf:"bytes,5,opt,name=nameGeneration"`
	// MaxUnavailable is how many VMs (a number or a percentage; 100% by default) may be not
	// ready at once while a proactive update restarts them.
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty" protobuf:"bytes,6,opt,name=maxUnavailable"`
	// ScaleInStrategy is how VMs are removed when the pool shrinks (proactive by default).
	// +optional
	ScaleInStrategy *VirtualMachinePoolScaleInStrategy `json:"scaleInStrategy,omitempty" protobuf:"bytes,7,opt,name=scaleInStrategy"`
	// UpdateStrategy is how VMs made from an older template are updated (proactive by default).
	// +optional
	UpdateStrategy *VirtualMachinePoolUpdateStrategy `json:"updateStrategy,omitempty" protobuf:"bytes,8,opt,name=updateStrategy"`
	// Autohealing replaces VMs that keep failing to start.
	// +optional
	Autohealing *VirtualMachinePoolAutohealingStrategy `json:"autohealing,omitempty" protobuf:"bytes,9,opt,name=autohealing"`
}

// VirtualMachinePoolAutohealingStrategy says when a failing VM is replaced by a new one.
type VirtualMachinePoolAutohealingStrategy struct {
	// StartUpFailureThreshold is the number of consecutive failed starts of a VM
	// (status.startFailure.consecutiveFailCount) after which it is replaced. Defaults to 3.
	// +optional
	StartUpFailureThreshold *uint32 `json:"startUpFailureThreshold,omitempty" protobuf:"varint,1,opt,name=startUpFailureThreshold"`
	// MinFailingToStartDuration is how long a VM must have been failing to start (its Ready
	// condition False in a failure status such as CrashLoopBackOff or ErrorUnschedulable)
	// before it is replaced. Defaults to 5 minutes.
	// +optional
	MinFailingToStartDuration *metav1.Duration `json:"minFailingToStartDuration,omitempty" protobuf:"bytes,2,opt,name=minFailingToStartDuration"`
}

// VirtualMachinePoolNameGeneration says which names get the VM's index appended.
type VirtualMachinePoolNameGeneration struct {
	// AppendIndexToConfigMapRefs appends -<index> to the ConfigMaps the template's volumes name.
	// +optional
	AppendIndexToConfigMapRefs *bool `json:"appendIndexToConfigMapRefs,omitempty" protobuf:"varint,1,opt,name=appendIndexToConfigMapRefs"`
	// AppendIndexToSecretRefs appends -<index> to the Secrets the template's volumes name
	// (secret volumes and cloud-init user and network data).
	// +optional
	AppendIndexToSecretRefs *bool `json:"appendIndexToSecretRefs,omitempty" protobuf:"varint,2,opt,name=appendIndexToSecretRefs"`
}

// VirtualMachinePoolScaleInStrategy is how a pool removes VMs; set one of its members.
type VirtualMachinePoolScaleInStrategy struct {
	// Unmanaged leaves the VMs alone: users remove them.
	// +optional
	Unmanaged *VirtualMachinePoolUnmanagedStrategy `json:"unmanaged,omitempty" protobuf:"bytes,1,opt,name=unmanaged"`
	// Opportunistic removes no VM itself: the pool shrinks as VMs are deleted by other means.
	// +optional
	Opportunistic *VirtualMachinePoolOpportunisticScaleInStrategy `json:"opportunistic,omitempty" protobuf:"bytes,2,opt,name=opportunistic"`
	// Proactive deletes the surplus VMs (the default).
	// +optional
	Proactive *VirtualMachinePoolProactiveScaleInStrategy `json:"proactive,omitempty" protobuf:"bytes,3,opt,name=proactive"`
}

// VirtualMachinePoolOpportunisticScaleInStrategy is the opportunistic scale-in.
type VirtualMachinePoolOpportunisticScaleInStrategy struct {
	// StatePreservation keeps the state of removed VMs: Disabled (the default), Offline (their
	// claims) or Online (claims and memory). Vireo preserves no state: only Disabled is accepted.
	// +optional
	StatePreservation *StatePreservation `json:"statePreservation,omitempty" protobuf:"bytes,1,opt,name=statePreservation,casttype=StatePreservation"`
}

// VirtualMachinePoolProactiveScaleInStrategy is the proactive scale-in.
type VirtualMachinePoolProactiveScaleInStrategy struct {
	// SelectionPolicy is the order in which VMs are removed.
	// +optional
	SelectionPolicy *VirtualMachinePoolSelectionPolicy `json:"selectionPolicy,omitempty" protobuf:"bytes,1,opt,name=selectionPolicy"`
	// StatePreservation keeps the state of removed VMs; only Disabled is accepted (see the
	// opportunistic strategy).
	// +optional
	StatePreservation *StatePreservation `json:"statePreservation,omitempty" protobuf:"bytes,2,opt,name=statePreservation,casttype=StatePreservation"`
}

// VirtualMachinePoolSelectionPolicy orders the VMs picked for scale-in or update.
type VirtualMachinePoolSelectionPolicy struct {
	// SortPolicy is AscendingOrder or DescendingOrder (of index), Newest, Oldest or Random.
	// Unset, Vireo picks VMs that are not ready first, then the highest index.
	// +optional
	SortPolicy *VirtualMachinePoolSortPolicy `json:"sortPolicy,omitempty" protobuf:"bytes,1,opt,name=sortPolicy,casttype=VirtualMachinePoolSortPolicy"`
	// Selectors limit the VMs that may be picked.
	// +optional
	Selectors *VirtualMachinePoolSelectors `json:"selectors,omitempty" protobuf:"bytes,2,opt,name=selectors"`
}

// VirtualMachinePoolSelectors limit the VMs a selection policy picks; both must match.
type VirtualMachinePoolSelectors struct {
	// LabelSelector selects VMs by the labels of their VMI template.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty" protobuf:"bytes,1,opt,name=labelSelector"`
	// NodeSelectorRequirementMatcher selects VMs by the labels of the node that runs them.
	// Vireo does not match nodes yet: a pool that sets it is refused. (KubeVirt's Go field is a
	// pointer to the list, which protobuf cannot carry; the wire form is the same list.)
	// +optional
	// +listType=atomic
	NodeSelectorRequirementMatcher []corev1.NodeSelectorRequirement `json:"nodeSelectorRequirementMatcher,omitempty" protobuf:"bytes,2,rep,name=nodeSelectorRequirementMatcher"`
}

// VirtualMachinePoolSortPolicy is an order of the VMs of a pool.
type VirtualMachinePoolSortPolicy string

// The sort policies.
const (
	SortAscendingOrder  VirtualMachinePoolSortPolicy = "AscendingOrder"
	SortDescendingOrder VirtualMachinePoolSortPolicy = "DescendingOrder"
	SortNewest          VirtualMachinePoolSortPolicy = "Newest"
	SortOldest          VirtualMachinePoolSortPolicy = "Oldest"
	SortRandom          VirtualMachinePoolSortPolicy = "Random"
)

// VirtualMachinePoolUpdateStrategy is how a pool updates VMs made from an older template; set
// one of its members.
type VirtualMachinePoolUpdateStrategy struct {
	// Unmanaged leaves the VMs as they are.
	// +optional
	Unmanaged *VirtualMachinePoolUnmanagedStrategy `json:"unmanaged,omitempty" protobuf:"bytes,1,opt,name=unmanaged"`
	// Opportunistic updates the VMs; a running guest takes the new template when it restarts.
	// +optional
	Opportunistic *VirtualMachineOpportunisticUpdateStrategy `json:"opportunistic,omitempty" protobuf:"bytes,2,opt,name=opportunistic"`
	// Proactive updates the VMs and restarts their guests (the default), at most
	// maxUnavailable at a time.
	// +optional
	Proactive *VirtualMachinePoolProactiveUpdateStrategy `json:"proactive,omitempty" protobuf:"bytes,3,opt,name=proactive"`
}

// VirtualMachinePoolUnmanagedStrategy leaves VMs alone.
type VirtualMachinePoolUnmanagedStrategy struct{}

// VirtualMachineOpportunisticUpdateStrategy updates VMs without restarting their guests.
type VirtualMachineOpportunisticUpdateStrategy struct{}

// VirtualMachinePoolProactiveUpdateStrategy updates VMs and restarts their guests.
type VirtualMachinePoolProactiveUpdateStrategy struct {
	// SelectionPolicy is the order in which VMs are updated.
	// +optional
	SelectionPolicy *VirtualMachinePoolSelectionPolicy `json:"selectionPolicy,omitempty" protobuf:"bytes,1,opt,name=selectionPolicy"`
}

// StatePreservation is whether a removed VM's state is kept: Disabled, Offline or Online.
type StatePreservation string

// StatePreservationDisabled keeps nothing of a removed VM.
const StatePreservationDisabled StatePreservation = "Disabled"
