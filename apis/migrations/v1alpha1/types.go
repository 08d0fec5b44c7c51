package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MigrationPolicy sets how the live migrations of the VMIs it selects run: their bandwidth,
// completion timeout, auto-converge and post-copy. It overrides the cluster's settings (the
// KubeVirt object's spec.configuration.migrations) for those VMIs. When several policies select
// a VMI, the one matching the most labels wins (VMI labels before namespace labels on a tie,
// then the first name in alphabetical order).
//
// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type MigrationPolicy struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Spec is which VMIs the policy applies to and the settings it gives their migrations.
	Spec MigrationPolicySpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	// Status is empty, as KubeVirt's.
	// +optional
	// +nullable
	Status MigrationPolicyStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// MigrationPolicySpec is a policy's selectors and settings. A setting left unset keeps the
// cluster's.
type MigrationPolicySpec struct {
	// Selectors are the labels a VMI and its namespace must carry for the policy to apply.
	Selectors *Selectors `json:"selectors" protobuf:"bytes,1,opt,name=selectors"`
	// AllowAutoConverge lets the platform slow the guest's vCPUs down so that its migration
	// converges.
	// +optional
	AllowAutoConverge *bool `json:"allowAutoConverge,omitempty" protobuf:"varint,2,opt,name=allowAutoConverge"`
	// BandwidthPerMigration limits each migration's network bandwidth, in bytes per second
	// (e.g. 64Mi); 0 means no limit.
	// +optional
	BandwidthPerMigration *resource.Quantity `json:"bandwidthPerMigration,omitempty" protobuf:"bytes,3,opt,name=bandwidthPerMigration"`
	// CompletionTimeoutPerGiB is how many seconds per GiB of guest memory a migration may take
	// before it is cancelled (or switched to post-copy).
	// +optional
	CompletionTimeoutPerGiB *int64 `json:"completionTimeoutPerGiB,omitempty" protobuf:"varint,4,opt,name=completionTimeoutPerGiB"`
	// MaxDowntimeMs is the longest pause of the guest at the switch-over, in milliseconds
	// (1 to 2000000; an int64 here, as server-side apply cannot hold KubeVirt's uint64).
	// KubeVirt accepts it only with its MigrationStallDetection or MigrationDowntimeTuning
	// feature gates, which Vireo does not have: it is refused.
	// +optional
	MaxDowntimeMs *int64 `json:"maxDowntimeMs,omitempty" protobuf:"varint,5,opt,name=maxDowntimeMs"`
	// AllowPostCopy lets a migration that reaches its completion timeout switch to post-copy.
	// +optional
	AllowPostCopy *bool `json:"allowPostCopy,omitempty" protobuf:"varint,6,opt,name=allowPostCopy"`
	// AllowWorkloadDisruption lets a migration that reaches its completion timeout disrupt the
	// guest to finish (by post-copy, when allowed) instead of being cancelled. Unset, it follows
	// allowPostCopy.
	// +optional
	AllowWorkloadDisruption *bool `json:"allowWorkloadDisruption,omitempty" protobuf:"varint,7,opt,name=allowWorkloadDisruption"`
}

// LabelSelector is a set of labels that must all be present with these values.
type LabelSelector map[string]string

// Selectors are the labels of the VMIs and namespaces a policy applies to. Every label of each
// selector must match; an empty selector matches everything.
type Selectors struct {
	// NamespaceSelector are labels the VMI's namespace must carry.
	// +optional
	NamespaceSelector LabelSelector `json:"namespaceSelector,omitempty" protobuf:"bytes,1,rep,name=namespaceSelector,casttype=LabelSelector"`
	// VirtualMachineInstanceSelector are labels the VMI must carry.
	// +optional
	VirtualMachineInstanceSelector LabelSelector `json:"virtualMachineInstanceSelector,omitempty" protobuf:"bytes,2,rep,name=virtualMachineInstanceSelector,casttype=LabelSelector"`
}

// MigrationPolicyStatus is empty.
type MigrationPolicyStatus struct{}

// MigrationPolicyList is a list of MigrationPolicies.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type MigrationPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Items are the policies in the list.
	// +listType=atomic
	Items []MigrationPolicy `json:"items" protobuf:"bytes,2,rep,name=items"`
}
