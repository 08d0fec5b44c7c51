package v1

// Well-known names shared by the API server, controllers and node agents. The values are
// KubeVirt's, so tooling written for KubeVirt recognises Vireo's objects.
const (
	// VirtualMachineInstanceFinalizer holds a VMI until its guest has shut down and its
	// launcher Pod is gone. (KubeVirt's name has no domain prefix.)
	VirtualMachineInstanceFinalizer = "foregroundDeleteVirtualMachine"
	// LegacyVirtualMachineInstanceFinalizer is the finalizer earlier Vireo versions put on VMIs;
	// the controller still releases it.
	LegacyVirtualMachineInstanceFinalizer = "kubevirt.io/foregroundDeleteVirtualMachine"
	// VirtualMachineInstanceMigrationFinalizer holds a migration until the controller has cleaned
	// up after it.
	VirtualMachineInstanceMigrationFinalizer = "kubevirt.io/migrationJobFinalize"
	// MigrationSelectorLabel on a migration names the VMI it migrates.
	MigrationSelectorLabel = "kubevirt.io/vmi-name"
	// EvacuationMigrationAnnotation on a migration marks it as an evacuation: its value is the
	// cordoned node the VMI is being moved off.
	EvacuationMigrationAnnotation = "kubevirt.io/evacuationMigration"
	// WorkloadUpdateMigrationAnnotation (empty value) on a migration marks it as created by
	// vireo-controller to move a guest to the current launcher (spec.workloadUpdateStrategy).
	WorkloadUpdateMigrationAnnotation = "kubevirt.io/workloadUpdateMigration"
	// OutdatedLauncherImageLabel (empty value) on a VMI says that it runs in a launcher other
	// than the one vireo-controller creates Pods with: `kubectl get vmi -l
	// kubevirt.io/outdatedLauncherImage` lists the guests an upgrade left on the release before.
	OutdatedLauncherImageLabel = "kubevirt.io/outdatedLauncherImage"
	// PlainStreamProtocolName is the websocket subprotocol of the console and vnc subresources
	// (KubeVirt's): binary frames carrying the stream's bytes as they are.
	PlainStreamProtocolName = "plain.kubevirt.io"
	// AppLabel marks Pods that belong to Vireo; launcher Pods carry AppLabel=LauncherApp.
	AppLabel = "kubevirt.io"
	// LauncherApp is AppLabel's value on launcher Pods.
	LauncherApp = "virt-launcher"
	// LauncherContainerName is the name of the launcher Pod's container (KubeVirt's), which a
	// downwardAPI volume's resourceFieldRef names.
	LauncherContainerName = "compute"
	// UploadApp (Vireo's own) is AppLabel's value on the importer Pods of uploads: the node
	// agent of their node relays the datavolumes/upload subresource to them.
	UploadApp = "vireo-upload"
	// CloneSourceApp (Vireo's own) is AppLabel's value on the source Pods of clones across
	// namespaces: the node agent of their node relays what they send to the target's upload Pod.
	CloneSourceApp = "vireo-clone-source"
	// UploadNodeAnnotation (Vireo's own) on a DataVolume names the node its upload Pod runs on:
	// vireo-controller writes it, vireo-apiserver reads it to reach that node's agent. The
	// node agent relays only to an upload Pod of that DataVolume, so a wrong value only fails.
	UploadNodeAnnotation = "vireo.dev/upload-node"
	// CreatedByLabel on a launcher Pod holds the UID of its VMI.
	CreatedByLabel = "kubevirt.io/created-by"
	// NodeNameLabel on a VMI names the node it runs on.
	NodeNameLabel = "kubevirt.io/nodeName"
	// MigrationJobLabel on a launcher Pod holds the UID of the migration it is the target of.
	MigrationJobLabel = "kubevirt.io/migrationJobUID"
	// MigrationTargetNodeNameLabel on a launcher Pod names the node a migration moves the VMI to.
	MigrationTargetNodeNameLabel = "kubevirt.io/migrationTargetNodeName"
	// NodeSchedulable on a Node says whether its node agent accepts VMIs.
	NodeSchedulable = "kubevirt.io/schedulable"
	// InstallStrategyLabel marks objects that an installation strategy deployed.
	InstallStrategyLabel = "kubevirt.io/install-strategy"

	// InstallNamespace is the namespace Vireo's components run in.
	InstallNamespace = "vireo-system"
	// APIServerUser, ControllerUser and NodeAgentUser are the user names of the ServiceAccounts
	// of vireo-apiserver, vireo-controller and vireo-nodeagent (on vireo-local also the names
	// in their client certificates): the only identities, besides vireo-apiserver's loopback
	// client, that may write what users may not.
	APIServerUser  = "system:serviceaccount:" + InstallNamespace + ":vireo-apiserver"
	ControllerUser = "system:serviceaccount:" + InstallNamespace + ":vireo-controller"
	NodeAgentUser  = "system:serviceaccount:" + InstallNamespace + ":vireo-nodeagent"
)
