// Package protocol is the command protocol between vireo-nodeagent and vireo-launcher: gRPC over
// a unix socket in the launcher's directory on the node (RunDir/pods/<launcher Pod UID>/), with
// JSON messages defined here. The node agent is the client; each launcher serves one VMI.
//
// The calls: Hello (version handshake; every other call needs it first), Sync (the VMI and what
// the node agent resolved for it; starts the domain), Shutdown (ACPI power button), Stop
// (destroy), PullSecrets (from version 2: the image pull secrets the launcher's Pod mounts, for
// the node agent's pulls of that VMI's containerDisks), Pause, Unpause and SoftReboot (from
// version 3: the VMI actions of the same names), PrepareTarget, Migrate and AbortMigration (from
// version 4: live migration, see migration.go), and Events, a server stream of the domain's whole status, sent at once and again on
// every change, so a reconnecting node agent learns the current state without replaying
// history. Console and VNC bytes never pass through gRPC: they are the unix sockets
// ConsoleSocket and VNCSocket next to CommandSocket.
//
// Each launcher Pod mounts only its own directory (RunDir/pods/<Pod UID> on the node) at
// LauncherDir, so every launcher sees the same paths inside its Pod while the node agent sees
// each at its own place: a migration's source and target (also on one node) never share a file,
// and the domain's XML needs no rewriting to move between them.
package protocol

import (
	"time"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// Version is the highest protocol version this build speaks, MinVersion the lowest. A node agent
// and a launcher agree on the highest version both know; a change that an older peer would
// misread needs a new version. Version 2 added PullSecrets, version 3 Pause, Unpause and
// SoftReboot, version 4 live migration.
const (
	Version    uint32 = 4
	MinVersion uint32 = 1
)

// VersionPullSecrets is the first version with the PullSecrets call.
const VersionPullSecrets uint32 = 2

// VersionActions is the first version with Pause, Unpause and SoftReboot.
const VersionActions uint32 = 3

// VersionMigration is the first version with PrepareTarget, Migrate and AbortMigration.
const VersionMigration uint32 = 4

// LauncherDir is where a launcher Pod mounts its own directory of the node's run directory
// (subPathExpr pods/$(POD_UID)); launchers from before it mounted the whole run directory.
const LauncherDir = "/var/run/vireo/launcher"

// File names in a launcher's directory.
const (
	// CommandSocket is the gRPC socket the launcher serves.
	CommandSocket = "launcher.sock"
	// ConsoleSocket is the guest's serial console (QEMU binds it).
	ConsoleSocket = "console.sock"
	// VNCSocket is the guest's display as RFB (QEMU binds it).
	VNCSocket = "vnc.sock"
	// PodsDir is the directory under the node's run directory that holds one directory per
	// launcher Pod, named after the Pod's UID, created by the node agent for uid 107.
	PodsDir = "pods"
)

// ClaimsDir is where a launcher Pod mounts its VMI's persistentVolumeClaim and dataVolume
// claims, each at ClaimsDir/<volume name>, with the disk in its disk.img (KubeVirt's paths).
const ClaimsDir = "/var/run/kubevirt-private/vmi-disks"

// HelloRequest opens a session: the versions the node agent speaks.
type HelloRequest struct {
	Versions []uint32 `json:"versions"`
}

// HelloResponse is the launcher's side of the handshake.
type HelloResponse struct {
	// Version is the version both speak (the highest common one).
	Version uint32 `json:"version"`
	// LauncherVersion is the launcher's build, for logs and status.
	LauncherVersion string `json:"launcherVersion"`
	// VMIUID is the UID of the VMI this launcher serves (from its Pod's arguments): the node
	// agent refuses to drive a launcher that serves another VMI.
	VMIUID string `json:"vmiUID"`
}

// SyncRequest asks the launcher to run the VMI: define and start its domain if it is not
// running yet. Sync is idempotent; the launcher never starts a second domain.
type SyncRequest struct {
	VMI *v1.VirtualMachineInstance `json:"vmi"`
	// ContainerDisks maps each containerDisk volume's name to the image's disk file in the
	// node's read-only image cache (the node agent pulls; the launcher has no credentials).
	ContainerDisks map[string]string `json:"containerDisks,omitempty"`
	// KernelBoot holds the kernel and initrd of spec.domain.firmware.kernelBoot, extracted by
	// the node agent from their image into the node's read-only image cache; nil when the VMI
	// boots no kernel directly. An older node agent never sets it, and an older launcher
	// ignores it (and then refuses the VMI, naming the kernel it was not given).
	KernelBoot *KernelBootFiles `json:"kernelBoot,omitempty"`
}

// KernelBootFiles are absolute paths of files in the node's image cache, in names the node
// agent built (never the paths inside the image).
type KernelBootFiles struct {
	// Kernel is the kernel of kernelBoot.container.kernelPath ("" when none is set).
	Kernel string `json:"kernel,omitempty"`
	// Initrd is the initrd of kernelBoot.container.initrdPath ("" when none is set).
	Initrd string `json:"initrd,omitempty"`
}

// PullSecretsRequest asks the launcher for the image pull secrets its Pod mounts for the named
// containerDisk volumes (each at SecretMountDir(volume, PullSecret)).
type PullSecretsRequest struct {
	Volumes []string `json:"volumes"`
}

// PullSecretsResponse holds, per volume, the .dockerconfigjson of its image pull secret. The
// node agent uses it for that VMI's pulls only and never stores it.
type PullSecretsResponse struct {
	DockerConfigJSON map[string][]byte `json:"dockerConfigJSON"`
}

// Empty is a message without fields.
type Empty struct{}

// DomainPhase is the coarse state of the launcher's domain.
type DomainPhase string

// Domain phases.
const (
	// DomainNone: no domain defined yet (Sync not received or still preparing).
	DomainNone DomainPhase = ""
	// DomainRunning: the guest runs.
	DomainRunning DomainPhase = "Running"
	// DomainPaused: the guest is paused. Reason says why when a user or an I/O error paused
	// it (PausedByUser, PausedIOError); it is empty for a pause of Vireo's own, such as the
	// last moments of a migration, which is not shown as the VMI's Paused condition.
	DomainPaused DomainPhase = "Paused"
	// DomainShuttingDown: an ACPI shutdown was requested and the guest has not stopped yet.
	DomainShuttingDown DomainPhase = "ShuttingDown"
	// DomainSucceeded: the guest powered off, or was shut down on request.
	DomainSucceeded DomainPhase = "Succeeded"
	// DomainFailed: the domain could not start, QEMU crashed, or libvirt died.
	DomainFailed DomainPhase = "Failed"
	// DomainMigrated: the guest left this launcher for a migration's target, where it runs on.
	// It ends the launcher like the others but not the VMI.
	DomainMigrated DomainPhase = "Migrated"
)

// Reasons of a paused domain (KubeVirt's reasons of the VMI's Paused condition).
const (
	PausedByUser  = "PausedByUser"
	PausedIOError = "PausedIOError"
)

// Ended reports whether a domain in this phase has ended for good.
func (p DomainPhase) Ended() bool {
	return p == DomainSucceeded || p == DomainFailed || p == DomainMigrated
}

// DomainStatus is the launcher's whole view of its domain.
type DomainStatus struct {
	Phase DomainPhase `json:"phase"`
	// Reason is a CamelCase cause (for a VMI's status.reason), Message a sentence for humans.
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// Emulation is "kvm" or "tcg" once the domain is defined; EmulationReason says why TCG.
	Emulation       string `json:"emulation,omitempty"`
	EmulationReason string `json:"emulationReason,omitempty"`
	// Interfaces are the guest's interfaces as the domain defines them.
	Interfaces []Interface `json:"interfaces,omitempty"`
	// Migration is the latest live migration out of (source) or into (target) this launcher.
	Migration *MigrationStatus `json:"migration,omitempty"`
	// Since is when the phase last changed.
	Since time.Time `json:"since"`
}

// Interface is one network interface of the domain.
type Interface struct {
	// Name is the interface's name in spec.domain.devices.interfaces.
	Name string `json:"name"`
	MAC  string `json:"mac"`
	// IPs are the addresses the guest is reached at: for masquerade, the Pod's.
	IPs []string `json:"ips,omitempty"`
}
