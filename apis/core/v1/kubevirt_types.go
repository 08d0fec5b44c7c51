package v1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KubeVirt holds the cluster's virtualization settings, where a KubeVirt user looks for them
// (`kubectl patch kubevirt`). Vireo honours one per installation, in namespace vireo-system;
// vireo-apiserver refuses any other. Only the settings Vireo implements are in its schema; a
// missing object means KubeVirt's defaults.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type KubeVirt struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Spec holds the settings. Vireo stores them as written; unset fields mean KubeVirt's defaults.
	Spec KubeVirtSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	// Status says whether the settings are served and taken up. It is written by Vireo only.
	// +optional
	Status KubeVirtStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// KubeVirtList is a list of KubeVirts.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type KubeVirtList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Items are the KubeVirts in the list.
	Items []KubeVirt `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// KubeVirtSpec is the desired configuration of the installation.
type KubeVirtSpec struct {
	// Configuration holds the cluster-wide settings (KubeVirt's spec.configuration).
	// +optional
	Configuration KubeVirtConfiguration `json:"configuration,omitempty" protobuf:"bytes,1,opt,name=configuration"`
	// WorkloadUpdateStrategy says whether and how guests still running in a launcher of an
	// earlier release are moved to the current one after an upgrade. Empty (the default), they
	// are left alone until they are migrated or restarted.
	// +optional
	WorkloadUpdateStrategy *KubeVirtWorkloadUpdateStrategy `json:"workloadUpdateStrategy,omitempty" protobuf:"bytes,2,opt,name=workloadUpdateStrategy"`
	// CertificateRotationStrategy is accepted empty only: KubeVirt's Go client always sends it,
	// and Vireo's certificates come from the installation. A non-empty value is an unknown field.
	// +optional
	CertificateRotationStrategy *KubeVirtCertificateRotateStrategy `json:"certificateRotateStrategy,omitempty" protobuf:"bytes,3,opt,name=certificateRotateStrategy"`
	// CustomizeComponents is accepted empty only: KubeVirt's Go client always sends it, and
	// Vireo's components are customized through its manifests. A non-empty value is an unknown
	// field.
	// +optional
	CustomizeComponents *CustomizeComponents `json:"customizeComponents,omitempty" protobuf:"bytes,4,opt,name=customizeComponents"`
}

// KubeVirtWorkloadUpdateStrategy is KubeVirt's spec.workloadUpdateStrategy: how vireo-controller
// moves running guests whose launcher is outdated (status.launcherContainerImageVersion is not
// the launcher image it creates Pods with) to the current launcher, once the node agents have
// rolled out.
type KubeVirtWorkloadUpdateStrategy struct {
	// WorkloadUpdateMethods are the ways an outdated guest may be moved: LiveMigrate (a live
	// migration to a Pod of the current launcher; the guest keeps running) and Evict (its
	// launcher Pod is evicted: a VM whose run strategy restarts it comes back on the current
	// launcher, a VMI of its own ends). With both, live-migratable guests migrate and only the
	// others are evicted. Empty means no automated workload updates.
	// +optional
	// +listType=atomic
	WorkloadUpdateMethods []WorkloadUpdateMethod `json:"workloadUpdateMethods,omitempty" protobuf:"bytes,1,rep,name=workloadUpdateMethods,casttype=WorkloadUpdateMethod"`
	// BatchEvictionSize is how many launcher Pods are evicted per batchEvictionInterval.
	// Defaults to 10; must not be negative.
	// +optional
	BatchEvictionSize *int32 `json:"batchEvictionSize,omitempty" protobuf:"varint,2,opt,name=batchEvictionSize"`
	// BatchEvictionInterval is how long to wait after a batch of evictions before the next
	// (a duration such as 1m). Defaults to 1m; must not be negative.
	// +optional
	BatchEvictionInterval *metav1.Duration `json:"batchEvictionInterval,omitempty" protobuf:"bytes,3,opt,name=batchEvictionInterval"`
}

// WorkloadUpdateMethod is a way of moving a guest to the current launcher.
type WorkloadUpdateMethod string

// The workload update methods (KubeVirt's).
const (
	// WorkloadUpdateMethodLiveMigrate live-migrates the guest to a Pod of the current launcher.
	WorkloadUpdateMethodLiveMigrate WorkloadUpdateMethod = "LiveMigrate"
	// WorkloadUpdateMethodEvict evicts the guest's launcher Pod (the eviction API, so Pod
	// disruption budgets apply).
	WorkloadUpdateMethodEvict WorkloadUpdateMethod = "Evict"
)

// KubeVirtCertificateRotateStrategy is KubeVirt's spec.certificateRotateStrategy, none of whose
// fields Vireo implements.
type KubeVirtCertificateRotateStrategy struct{}

// CustomizeComponents is KubeVirt's spec.customizeComponents, none of whose fields Vireo
// implements.
type CustomizeComponents struct{}

// KubeVirtConfiguration is the subset of KubeVirt's cluster configuration Vireo honours.
type KubeVirtConfiguration struct {
	// MigrationConfiguration holds the live-migration limits and timeouts.
	// +optional
	MigrationConfiguration *MigrationConfiguration `json:"migrations,omitempty" protobuf:"bytes,1,opt,name=migrations"`
	// DeveloperConfiguration holds developer options, among them software emulation.
	// +optional
	DeveloperConfiguration *DeveloperConfiguration `json:"developerConfiguration,omitempty" protobuf:"bytes,2,opt,name=developerConfiguration"`
}

// MigrationConfiguration holds the live-migration settings, with KubeVirt's names and defaults.
type MigrationConfiguration struct {
	// ParallelMigrationsPerCluster is the most live migrations that run at once in the cluster.
	// Defaults to 5; must be 1 or more.
	// +optional
	ParallelMigrationsPerCluster *uint32 `json:"parallelMigrationsPerCluster,omitempty" protobuf:"varint,1,opt,name=parallelMigrationsPerCluster"`
	// ParallelOutboundMigrationsPerNode is the most live migrations that leave one node at once.
	// Defaults to 2; must be 1 or more.
	// +optional
	ParallelOutboundMigrationsPerNode *uint32 `json:"parallelOutboundMigrationsPerNode,omitempty" protobuf:"varint,2,opt,name=parallelOutboundMigrationsPerNode"`
	// BandwidthPerMigration limits the network bandwidth of each live migration, in bytes per
	// second (e.g. 64Mi). Must be positive; unset means no limit.
	// +optional
	BandwidthPerMigration *resource.Quantity `json:"bandwidthPerMigration,omitempty" protobuf:"bytes,3,opt,name=bandwidthPerMigration"`
	// CompletionTimeoutPerGiB is how many seconds per GiB of guest memory a migration may take
	// before it is cancelled (or switched to post-copy when allowPostCopy is true). Defaults to
	// 150; must not be negative.
	// +optional
	CompletionTimeoutPerGiB *int64 `json:"completionTimeoutPerGiB,omitempty" protobuf:"varint,4,opt,name=completionTimeoutPerGiB"`
	// ProgressTimeout is how many seconds a migration may go without transferring any data
	// before it is cancelled. Defaults to 150; must not be negative.
	// +optional
	ProgressTimeout *int64 `json:"progressTimeout,omitempty" protobuf:"varint,5,opt,name=progressTimeout"`
	// AllowAutoConverge lets the platform slow the guest's vCPUs down so that a busy guest's
	// migration converges. Defaults to false.
	// +optional
	AllowAutoConverge *bool `json:"allowAutoConverge,omitempty" protobuf:"varint,6,opt,name=allowAutoConverge"`
	// AllowPostCopy lets a migration that reaches its completion timeout switch to post-copy
	// (the guest runs on the target and fetches the rest of its memory on demand; a network
	// failure then loses the guest). Defaults to false.
	// +optional
	AllowPostCopy *bool `json:"allowPostCopy,omitempty" protobuf:"varint,7,opt,name=allowPostCopy"`
	// AllowWorkloadDisruption lets a migration that reaches its completion timeout disrupt the
	// guest to finish (by post-copy, when allowPostCopy is true) instead of being cancelled.
	// Unset, it follows allowPostCopy.
	// +optional
	AllowWorkloadDisruption *bool `json:"allowWorkloadDisruption,omitempty" protobuf:"varint,8,opt,name=allowWorkloadDisruption"`
}

// DeveloperConfiguration holds developer options.
type DeveloperConfiguration struct {
	// UseEmulation lets guests fall back to software emulation (QEMU TCG, 10-50x slower) on
	// nodes without usable KVM. When false (KubeVirt's default) a VMI whose node has no KVM
	// fails. Changes apply to launcher Pods created afterwards; running guests are not touched.
	// +optional
	UseEmulation bool `json:"useEmulation,omitempty" protobuf:"varint,1,opt,name=useEmulation"`
}

// KubeVirtPhase is the deployment phase of the installation.
type KubeVirtPhase string

// KubeVirt's deployment phases. Vireo's object is Deployed as soon as vireo-apiserver stores
// it: the installation's components are deployed by its manifests, not by an operator.
const (
	// KubeVirtPhaseDeploying means the installation is being deployed.
	KubeVirtPhaseDeploying KubeVirtPhase = "Deploying"
	// KubeVirtPhaseDeployed means the installation is deployed and the settings are served.
	KubeVirtPhaseDeployed KubeVirtPhase = "Deployed"
	// KubeVirtPhaseDeleting means the installation is being removed.
	KubeVirtPhaseDeleting KubeVirtPhase = "Deleting"
	// KubeVirtPhaseDeleted means the installation was removed.
	KubeVirtPhaseDeleted KubeVirtPhase = "Deleted"
)

// KubeVirtConditionType names a condition of the installation.
type KubeVirtConditionType string

// KubeVirt's condition types.
const (
	// KubeVirtConditionAvailable is True while the installation serves its API
	// (`kubectl wait kv --for condition=Available` works as with KubeVirt).
	KubeVirtConditionAvailable KubeVirtConditionType = "Available"
	// KubeVirtConditionProgressing is True while the installation is being changed.
	KubeVirtConditionProgressing KubeVirtConditionType = "Progressing"
	// KubeVirtConditionDegraded is True while the installation does not work completely.
	KubeVirtConditionDegraded KubeVirtConditionType = "Degraded"
	// KubeVirtConditionCreated is True once every resource of the installation exists.
	KubeVirtConditionCreated KubeVirtConditionType = "Created"
	// KubeVirtConditionSynchronized is False when deploying or deleting failed.
	KubeVirtConditionSynchronized KubeVirtConditionType = "Synchronized"
)

// KubeVirtCondition is one observed condition of the installation.
type KubeVirtCondition struct {
	// Type of the condition.
	Type KubeVirtConditionType `json:"type" protobuf:"bytes,1,opt,name=type,casttype=KubeVirtConditionType"`
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

// KubeVirtStatus is the observed state of the installation.
type KubeVirtStatus struct {
	// Phase is the deployment phase: Deploying, Deployed, Deleting or Deleted.
	// +optional
	Phase KubeVirtPhase `json:"phase,omitempty" protobuf:"bytes,1,opt,name=phase,casttype=KubeVirtPhase"`
	// Conditions are the current observed conditions, one per type.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []KubeVirtCondition `json:"conditions,omitempty" protobuf:"bytes,2,rep,name=conditions"`
	// ObservedGeneration is the generation of the spec vireo-controller last took up: once it
	// equals metadata.generation, new launcher Pods get the current settings.
	// +optional
	ObservedGeneration *int64 `json:"observedGeneration,omitempty" protobuf:"varint,3,opt,name=observedGeneration"`
	// OutdatedVirtualMachineInstanceWorkloads is how many VMIs run in a launcher other than
	// the one vireo-controller creates Pods with (they carry the label
	// kubevirt.io/outdatedLauncherImage).
	// +optional
	OutdatedVirtualMachineInstanceWorkloads *int32 `json:"outdatedVirtualMachineInstanceWorkloads,omitempty" protobuf:"varint,4,opt,name=outdatedVirtualMachineInstanceWorkloads"`
}
