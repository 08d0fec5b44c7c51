package v1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// This file mirrors the few Kubernetes core/v1 types that KubeVirt's API embeds
// (resources, scheduling constraints, object references, pull policies). They
// keep core/v1's JSON wire format exactly, so that apis/ depends only on
// k8s.io/apimachinery and not on k8s.io/api.

// ResourceName names a compute or storage resource, such as "cpu" or "memory".
type ResourceName string

const (
	// ResourceCPU is CPU time, in cores (for example "500m" or "2").
	ResourceCPU ResourceName = "cpu"
	// ResourceMemory is memory, in bytes (for example "512Mi").
	ResourceMemory ResourceName = "memory"
	// ResourceStorage is storage capacity, in bytes (for example "10Gi").
	ResourceStorage ResourceName = "storage"
	// ResourceEphemeralStorage is node-local scratch storage, in bytes.
	ResourceEphemeralStorage ResourceName = "ephemeral-storage"
)

// ResourceList maps resource names to quantities; same wire format as Kubernetes' core/v1 ResourceList.
type ResourceList map[ResourceName]resource.Quantity

// Name returns the quantity stored for name, or a zero quantity in defaultFormat when there is none.
func (rl ResourceList) Name(name ResourceName, defaultFormat resource.Format) *resource.Quantity {
	if q, ok := rl[name]; ok {
		return &q
	}
	return &resource.Quantity{Format: defaultFormat}
}

// Cpu returns the "cpu" quantity, or zero when unset.
func (rl ResourceList) Cpu() *resource.Quantity {
	return rl.Name(ResourceCPU, resource.DecimalSI)
}

// Memory returns the "memory" quantity, or zero when unset.
func (rl ResourceList) Memory() *resource.Quantity {
	return rl.Name(ResourceMemory, resource.BinarySI)
}

// Storage returns the "storage" quantity, or zero when unset.
func (rl ResourceList) Storage() *resource.Quantity {
	return rl.Name(ResourceStorage, resource.BinarySI)
}

// PullPolicy tells when a container image is pulled; same values as Kubernetes' imagePullPolicy.
type PullPolicy string

const (
	// PullAlways pulls the image every time it is used.
	PullAlways PullPolicy = "Always"
	// PullNever never pulls; the image must already be present on the node.
	PullNever PullPolicy = "Never"
	// PullIfNotPresent pulls only when the image is not already present on the node.
	PullIfNotPresent PullPolicy = "IfNotPresent"
)

// LocalObjectReference names another object in the same namespace.
// +structType=atomic
type LocalObjectReference struct {
	// Name of the referenced object, in the namespace of the referring object.
	// +optional
	Name string `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
}

// Affinity groups the node affinity, pod affinity and pod anti-affinity rules
// that are copied to the launcher pod and so steer where the VMI runs.
type Affinity struct {
	// NodeAffinity constrains the VMI to nodes whose labels or fields match.
	// +optional
	NodeAffinity *NodeAffinity `json:"nodeAffinity,omitempty" protobuf:"bytes,1,opt,name=nodeAffinity"`
	// PodAffinity asks for the VMI to be placed in the same topology domain as matching pods.
	// +optional
	PodAffinity *PodAffinity `json:"podAffinity,omitempty" protobuf:"bytes,2,opt,name=podAffinity"`
	// PodAntiAffinity asks for the VMI to be kept out of topology domains that run matching pods.
	// +optional
	PodAntiAffinity *PodAntiAffinity `json:"podAntiAffinity,omitempty" protobuf:"bytes,3,opt,name=podAntiAffinity"`
}

// NodeAffinity holds hard and soft node placement rules.
type NodeAffinity struct {
	// RequiredDuringSchedulingIgnoredDuringExecution must be met for the VMI to be scheduled onto a node.
	// Nodes that stop meeting it later do not evict the VMI.
	// +optional
	RequiredDuringSchedulingIgnoredDuringExecution *NodeSelector `json:"requiredDuringSchedulingIgnoredDuringExecution,omitempty" protobuf:"bytes,1,opt,name=requiredDuringSchedulingIgnoredDuringExecution"`
	// PreferredDuringSchedulingIgnoredDuringExecution lists weighted preferences; the scheduler favours
	// nodes with the highest sum of weights of the terms they match.
	// +optional
	// +listType=atomic
	PreferredDuringSchedulingIgnoredDuringExecution []PreferredSchedulingTerm `json:"preferredDuringSchedulingIgnoredDuringExecution,omitempty" protobuf:"bytes,2,rep,name=preferredDuringSchedulingIgnoredDuringExecution"`
}

// NodeSelector is a disjunction of node selector terms: a node matches when any term matches.
// +structType=atomic
type NodeSelector struct {
	// NodeSelectorTerms are ORed together. Must not be empty.
	// +listType=atomic
	NodeSelectorTerms []NodeSelectorTerm `json:"nodeSelectorTerms" protobuf:"bytes,1,rep,name=nodeSelectorTerms"`
}

// NodeSelectorTerm is a conjunction of requirements on node labels and node fields.
// +structType=atomic
type NodeSelectorTerm struct {
	// MatchExpressions are requirements on node labels, all of which must hold.
	// +optional
	// +listType=atomic
	MatchExpressions []NodeSelectorRequirement `json:"matchExpressions,omitempty" protobuf:"bytes,1,rep,name=matchExpressions"`
	// MatchFields are requirements on node fields (such as metadata.name), all of which must hold.
	// +optional
	// +listType=atomic
	MatchFields []NodeSelectorRequirement `json:"matchFields,omitempty" protobuf:"bytes,2,rep,name=matchFields"`
}

// NodeSelectorOperator relates a node label or field key to a set of values.
type NodeSelectorOperator string

const (
	// NodeSelectorOpIn matches when the value is one of the listed values.
	NodeSelectorOpIn NodeSelectorOperator = "In"
	// NodeSelectorOpNotIn matches when the value is none of the listed values.
	NodeSelectorOpNotIn NodeSelectorOperator = "NotIn"
	// NodeSelectorOpExists matches when the key is present, whatever its value.
	NodeSelectorOpExists NodeSelectorOperator = "Exists"
	// NodeSelectorOpDoesNotExist matches when the key is absent.
	NodeSelectorOpDoesNotExist NodeSelectorOperator = "DoesNotExist"
	// NodeSelectorOpGt matches when the value, read as an integer, is greater than the single listed value.
	NodeSelectorOpGt NodeSelectorOperator = "Gt"
	// NodeSelectorOpLt matches when the value, read as an integer, is less than the single listed value.
	NodeSelectorOpLt NodeSelectorOperator = "Lt"
)

// NodeSelectorRequirement is one test of a node label or field against a set of values.
type NodeSelectorRequirement struct {
	// Key is the label key or field path the requirement tests.
	Key string `json:"key" protobuf:"bytes,1,opt,name=key"`
	// Operator is one of In, NotIn, Exists, DoesNotExist, Gt or Lt.
	Operator NodeSelectorOperator `json:"operator" protobuf:"bytes,2,opt,name=operator,casttype=NodeSelectorOperator"`
	// Values to compare against: one or more for In and NotIn, none for Exists and
	// DoesNotExist, exactly one integer for Gt and Lt.
	// +optional
	// +listType=atomic
	Values []string `json:"values,omitempty" protobuf:"bytes,3,rep,name=values"`
}

// PreferredSchedulingTerm is a node selector term with the weight it adds to a matching node's score.
type PreferredSchedulingTerm struct {
	// Weight added to the node's score when the preference matches, from 1 to 100.
	Weight int32 `json:"weight" protobuf:"varint,1,opt,name=weight"`
	// Preference is the node selector term that has to match.
	Preference NodeSelectorTerm `json:"preference" protobuf:"bytes,2,opt,name=preference"`
}

// PodAffinity places the VMI near pods that match its terms.
type PodAffinity struct {
	// RequiredDuringSchedulingIgnoredDuringExecution terms must all be met for the VMI to be scheduled onto a node.
	// +optional
	// +listType=atomic
	RequiredDuringSchedulingIgnoredDuringExecution []PodAffinityTerm `json:"requiredDuringSchedulingIgnoredDuringExecution,omitempty" protobuf:"bytes,1,rep,name=requiredDuringSchedulingIgnoredDuringExecution"`
	// PreferredDuringSchedulingIgnoredDuringExecution terms add their weight to the score of nodes that meet them.
	// +optional
	// +listType=atomic
	PreferredDuringSchedulingIgnoredDuringExecution []WeightedPodAffinityTerm `json:"preferredDuringSchedulingIgnoredDuringExecution,omitempty" protobuf:"bytes,2,rep,name=preferredDuringSchedulingIgnoredDuringExecution"`
}

// PodAntiAffinity keeps the VMI away from pods that match its terms.
type PodAntiAffinity struct {
	// RequiredDuringSchedulingIgnoredDuringExecution terms must all be met for the VMI to be scheduled onto a node.
	// +optional
	// +listType=atomic
	RequiredDuringSchedulingIgnoredDuringExecution []PodAffinityTerm `json:"requiredDuringSchedulingIgnoredDuringExecution,omitempty" protobuf:"bytes,1,rep,name=requiredDuringSchedulingIgnoredDuringExecution"`
	// PreferredDuringSchedulingIgnoredDuringExecution terms add their weight to the score of nodes that meet them.
	// +optional
	// +listType=atomic
	PreferredDuringSchedulingIgnoredDuringExecution []WeightedPodAffinityTerm `json:"preferredDuringSchedulingIgnoredDuringExecution,omitempty" protobuf:"bytes,2,rep,name=preferredDuringSchedulingIgnoredDuringExecution"`
}

// PodAffinityTerm selects a set of pods and the topology domain (nodes sharing a
// label value) in which the VMI should, or should not, run together with them.
type PodAffinityTerm struct {
	// LabelSelector selects the pods this term is about. Empty or unset selects no pods.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty" protobuf:"bytes,1,opt,name=labelSelector"`
	// Namespaces to look for matching pods in, in addition to those picked by namespaceSelector.
	// Empty together with a null namespaceSelector means the VMI's own namespace.
	// +optional
	// +listType=atomic
	Namespaces []string `json:"namespaces,omitempty" protobuf:"bytes,2,rep,name=namespaces"`
	// TopologyKey is the node label whose value defines a topology domain (for example
	// kubernetes.io/hostname for "same node"). Must not be empty.
	TopologyKey string `json:"topologyKey" protobuf:"bytes,3,opt,name=topologyKey"`
	// NamespaceSelector picks namespaces to look for matching pods in; an empty selector means all namespaces.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty" protobuf:"bytes,4,opt,name=namespaceSelector"`
	// MatchLabelKeys are label keys whose values on the launcher pod are added to labelSelector as "In" requirements.
	// +optional
	// +listType=atomic
	MatchLabelKeys []string `json:"matchLabelKeys,omitempty" protobuf:"bytes,5,rep,name=matchLabelKeys"`
	// MismatchLabelKeys are label keys whose values on the launcher pod are added to labelSelector as "NotIn" requirements.
	// +optional
	// +listType=atomic
	MismatchLabelKeys []string `json:"mismatchLabelKeys,omitempty" protobuf:"bytes,6,rep,name=mismatchLabelKeys"`
}

// WeightedPodAffinityTerm is a pod affinity term with the weight it adds to a matching node's score.
type WeightedPodAffinityTerm struct {
	// Weight added to the node's score when the term matches, from 1 to 100.
	Weight int32 `json:"weight" protobuf:"varint,1,opt,name=weight"`
	// PodAffinityTerm is the term that has to match.
	PodAffinityTerm PodAffinityTerm `json:"podAffinityTerm" protobuf:"bytes,2,opt,name=podAffinityTerm"`
}

// TolerationOperator relates a toleration's key to its value.
type TolerationOperator string

const (
	// TolerationOpExists tolerates every taint with the key, whatever its value.
	TolerationOpExists TolerationOperator = "Exists"
	// TolerationOpEqual tolerates taints whose key and value both equal the toleration's.
	TolerationOpEqual TolerationOperator = "Equal"
	// TolerationOpLt tolerates taints whose integer value is less than the toleration's.
	TolerationOpLt TolerationOperator = "Lt"
	// TolerationOpGt tolerates taints whose integer value is greater than the toleration's.
	TolerationOpGt TolerationOperator = "Gt"
)

// TaintEffect is what a node taint does to pods that do not tolerate it.
type TaintEffect string

const (
	// TaintEffectNoSchedule keeps new pods off the node.
	TaintEffectNoSchedule TaintEffect = "NoSchedule"
	// TaintEffectPreferNoSchedule makes the scheduler avoid the node when it can.
	TaintEffectPreferNoSchedule TaintEffect = "PreferNoSchedule"
	// TaintEffectNoExecute keeps new pods off the node and evicts running ones.
	TaintEffectNoExecute TaintEffect = "NoExecute"
)

// Toleration lets the VMI's launcher pod be scheduled onto (or stay on) nodes with a matching taint.
type Toleration struct {
	// Key is the taint key tolerated; empty with operator Exists tolerates every taint.
	// +optional
	Key string `json:"key,omitempty" protobuf:"bytes,1,opt,name=key"`
	// Operator is Exists or Equal (the default); Lt and Gt compare integer values.
	// +optional
	Operator TolerationOperator `json:"operator,omitempty" protobuf:"bytes,2,opt,name=operator,casttype=TolerationOperator"`
	// Value the taint must have; empty when operator is Exists.
	// +optional
	Value string `json:"value,omitempty" protobuf:"bytes,3,opt,name=value"`
	// Effect is the taint effect tolerated (NoSchedule, PreferNoSchedule or NoExecute); empty tolerates all effects.
	// +optional
	Effect TaintEffect `json:"effect,omitempty" protobuf:"bytes,4,opt,name=effect,casttype=TaintEffect"`
	// TolerationSeconds bounds how long a NoExecute taint is tolerated before eviction; unset means forever.
	// +optional
	TolerationSeconds *int64 `json:"tolerationSeconds,omitempty" protobuf:"varint,5,opt,name=tolerationSeconds"`
}

// TopologySpreadConstraint spreads launcher Pods across a topology, as core/v1 spells it.
type TopologySpreadConstraint struct {
	// MaxSkew is how unevenly the Pods may be spread.
	MaxSkew int32 `json:"maxSkew" protobuf:"varint,1,opt,name=maxSkew"`
	// TopologyKey is the node label whose values are the topology's domains.
	TopologyKey string `json:"topologyKey" protobuf:"bytes,2,opt,name=topologyKey"`
	// WhenUnsatisfiable is DoNotSchedule or ScheduleAnyway.
	WhenUnsatisfiable string `json:"whenUnsatisfiable" protobuf:"bytes,3,opt,name=whenUnsatisfiable"`
	// LabelSelector selects the Pods that are counted.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty" protobuf:"bytes,4,opt,name=labelSelector"`
	// MinDomains is the least number of eligible domains.
	// +optional
	MinDomains *int32 `json:"minDomains,omitempty" protobuf:"varint,5,opt,name=minDomains"`
	// NodeAffinityPolicy is Honor or Ignore.
	// +optional
	NodeAffinityPolicy *string `json:"nodeAffinityPolicy,omitempty" protobuf:"bytes,6,opt,name=nodeAffinityPolicy"`
	// NodeTaintsPolicy is Honor or Ignore.
	// +optional
	NodeTaintsPolicy *string `json:"nodeTaintsPolicy,omitempty" protobuf:"bytes,7,opt,name=nodeTaintsPolicy"`
	// MatchLabelKeys are Pod label keys whose values further select the Pods counted.
	// +optional
	// +listType=atomic
	MatchLabelKeys []string `json:"matchLabelKeys,omitempty" protobuf:"bytes,8,rep,name=matchLabelKeys"`
}
