package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// VirtualMachineInstanceReplicaSet keeps a number of VMIs made from one template running: it
// creates VMIs when fewer than spec.replicas match its selector and deletes the surplus.
//
// +genclient
// +genclient:method=GetScale,verb=get,subresource=scale,result=k8s.io/api/autoscaling/v1.Scale
// +genclient:method=UpdateScale,verb=update,subresource=scale,input=k8s.io/api/autoscaling/v1.Scale,result=k8s.io/api/autoscaling/v1.Scale
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachineInstanceReplicaSet struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Spec is the number of VMIs wanted, how to find them and the template new ones are made from.
	Spec VirtualMachineInstanceReplicaSetSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	// Status is what the controller last observed. It is written by Vireo only.
	// +optional
	// +nullable
	Status VirtualMachineInstanceReplicaSetStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// VirtualMachineInstanceReplicaSetList is a list of VirtualMachineInstanceReplicaSets.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachineInstanceReplicaSetList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Items are the replica sets in the list.
	Items []VirtualMachineInstanceReplicaSet `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// VirtualMachineInstanceReplicaSetSpec is the desired state of a replica set.
type VirtualMachineInstanceReplicaSetSpec struct {
	// Replicas is the number of VMIs wanted. Defaults to 1; 0 is kept as written.
	// +optional
	Replicas *int32 `json:"replicas,omitempty" protobuf:"varint,1,opt,name=replicas"`
	// Selector finds the replica set's VMIs by their labels. It must match the template's labels.
	Selector *metav1.LabelSelector `json:"selector" protobuf:"bytes,2,opt,name=selector"`
	// Template is the VMI that new replicas are made from.
	Template *VirtualMachineInstanceTemplateSpec `json:"template" protobuf:"bytes,3,opt,name=template"`
	// Paused stops the replica set from creating and deleting VMIs, so that they can be managed
	// by hand.
	// +optional
	Paused bool `json:"paused,omitempty" protobuf:"varint,4,opt,name=paused"`
}

// VirtualMachineInstanceReplicaSetStatus is what the controller observed of a replica set (or of
// a VirtualMachinePool, whose status has the same fields).
type VirtualMachineInstanceReplicaSetStatus struct {
	// Replicas is the number of the set's VMIs that are neither finished nor being deleted (of
	// a pool: its VMs not being deleted).
	// +optional
	Replicas int32 `json:"replicas,omitempty" protobuf:"varint,1,opt,name=replicas"`
	// ReadyReplicas is the number of the set's VMIs (a pool's VMs) whose Ready condition is True.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty" protobuf:"varint,2,opt,name=readyReplicas"`
	// Conditions are ReplicaFailure (a VMI could not be created or deleted) and ReplicaPaused.
	// +optional
	// +listType=atomic
	Conditions []VirtualMachineInstanceReplicaSetCondition `json:"conditions,omitempty" protobuf:"bytes,3,rep,name=conditions"`
	// LabelSelector is the selector in its string form, which a HorizontalPodAutoscaler reads
	// through the scale subresource.
	// +optional
	LabelSelector string `json:"labelSelector,omitempty" protobuf:"bytes,4,opt,name=labelSelector"`
}

// VirtualMachineInstanceReplicaSetConditionType names a condition of a replica set.
type VirtualMachineInstanceReplicaSetConditionType string

const (
	// ReplicaSetReplicaFailure is True while a VMI of the set could not be created or deleted.
	ReplicaSetReplicaFailure VirtualMachineInstanceReplicaSetConditionType = "ReplicaFailure"
	// ReplicaSetReplicaPaused is True while the set is paused.
	ReplicaSetReplicaPaused VirtualMachineInstanceReplicaSetConditionType = "ReplicaPaused"
)

// VirtualMachineInstanceReplicaSetCondition is one condition of a replica set.
type VirtualMachineInstanceReplicaSetCondition struct {
	// Type of the condition: ReplicaFailure or ReplicaPaused.
	Type VirtualMachineInstanceReplicaSetConditionType `json:"type" protobuf:"bytes,1,opt,name=type,casttype=VirtualMachineInstanceReplicaSetConditionType"`
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
	// Reason is a CamelCase, machine-readable cause: FailedCreate, FailedDelete or Paused.
	// +optional
	Reason string `json:"reason,omitempty" protobuf:"bytes,5,opt,name=reason"`
	// Message explains the condition to humans.
	// +optional
	Message string `json:"message,omitempty" protobuf:"bytes,6,opt,name=message"`
}
