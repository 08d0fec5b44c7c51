// Package protocol is the command protocol between vireo-nodeagent and vireo-launcher: gRPC over
// a unix socket in the launcher's directory (LauncherDir, the launcher Pod's emptyDir the node
// agent reaches at KubeletPodsDir/EmptyDirPath), with JSON messages defined here. The node agent
// is the client; each launcher serves one VMI.
//
// The calls: Hello (version handshake; every other call needs it first), Sync (the VMI; starts
// the domain), Shutdown (ACPI power button), Stop (destroy), Pause, Unpause and SoftReboot (from
// version 3: the VMI actions of the same names), PrepareTarget, Migrate and AbortMigration (from
// version 4: live migration, see migration.go), and Events, a server stream of the domain's whole status, sent at once and again on
// every change, so a reconnecting node agent learns the current state without replaying
// history. Console and VNC bytes never pass through gRPC: they are the unix sockets
// ConsoleSocket and VNCSocket next to CommandSocket.
//
// Each launcher Pod mounts only its own directory (its emptyDir) at LauncherDir, so every
// launcher sees the same paths inside its Pod while the node agent sees each at its own place:
// a migration's source and target (also on one node) never share a file, and the domain's XML
// needs no rewriting to move between them.
package protocol

import (
	"time"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// Version is the highest protocol version this build speaks, MinVersion the lowest. A node agent
// and a launcher agree on the highest version both know; a change that an older peer would
// misread needs a new version (and a check of the negotiated version where the call is made).
// No release has shipped another version than 1: it has every call.
const (
	Version    uint32 = 1
	MinVersion uint32 = 1
)

// LauncherDir is where a launcher Pod mounts its own directory, an emptyDir it shares with its
// node agent, which finds it below the kubelet's Pod directories (KubeletPodsDir,
// EmptyDirPath).
const LauncherDir = "/var/run/vireo/launcher"

// PrivateDir is where a launcher Pod mounts the launcher's private emptyDir (its libvirt
// session daemon's sockets and state), shared with no one.
const PrivateDir = "/var/run/vireo-private"

// KubeletPodsDir is where the kubelet keeps each Pod's volumes (its --root-dir's pods/).
const KubeletPodsDir = "/var/lib/kubelet/pods"

// EmptyDirPath is the path, relative to KubeletPodsDir, of Pod podUID's emptyDir volume.
func EmptyDirPath(podUID, volume string) string {
	return podUID + "/volumes/kubernetes.io~empty-dir/" + volume
}

// CapabilitiesSeed is the directory in LauncherDir the node agent copies the node's QEMU
// capabilities into (renamed into place complete) for the launcher's libvirtd.
const CapabilitiesSeed = "capabilities"

// File names in a launcher's directory.
const (
	// CommandSocket is the gRPC socket the launcher serves.
	CommandSocket = "launcher.sock"
	// ConsoleSocket is the guest's serial console (QEMU binds it).
	ConsoleSocket = "console.sock"
	// VNCSocket is the guest's display as RFB (QEMU binds it).
	VNCSocket = "vnc.sock"
	// NetworkSocket hands the launcher's network namespace and a /dev/net/tun descriptor to
	// the node agent, which has the node's network helper set up the masquerade binding in it
	// (podnetwork.SendNamespace; each connection gets one message).
	NetworkSocket = "network.sock"
)

// AgentSocket is the guest agent's channel (QEMU binds it, libvirt alone connects), in the
// launcher's private directory: the node agent never reaches the guest agent directly.
const AgentSocket = "agent.sock"

// ClaimsDir is where a launcher Pod mounts its VMI's persistentVolumeClaim and dataVolume
// claims, each at ClaimsDir/<volume name>, with the disk in its disk.img (KubeVirt's paths).
const ClaimsDir = "/var/run/kubevirt-private/vmi-disks"

// ContainerDisksDir is where a launcher Pod mounts the image of each containerDisk volume, as
// an image volume the kubelet pulls, at ContainerDiskDir(<volume name>), read-only.
const ContainerDisksDir = "/var/run/kubevirt/container-disks"

// ContainerDiskDir is where containerDisk volume's image is mounted (volume is a DNS-1123
// label, checked by the API and again by the launcher).
func ContainerDiskDir(volume string) string { return ContainerDisksDir + "/" + volume }

// KernelBootDir is where a launcher Pod mounts the image of
// spec.domain.firmware.kernelBoot.container, as an image volume, read-only.
const KernelBootDir = "/var/run/kubevirt/kernel-boot"

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
// running yet. Sync is idempotent; the launcher never starts a second domain. The images of the
// VMI's containerDisks and kernelBoot are the launcher Pod's image volumes (ContainerDisksDir,
// KernelBootDir), pulled by the kubelet.
type SyncRequest struct {
	VMI *v1.VirtualMachineInstance `json:"vmi"`
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
	// AgentConnected is true while the guest agent has its channel open.
	AgentConnected bool `json:"agentConnected,omitempty"`
	// AccessCredentials is how applying the VMI's qemuGuestAgent access credentials went; nil
	// when it has none or they were not tried yet.
	AccessCredentials *CredentialsStatus `json:"accessCredentials,omitempty"`
	// Terminated is true once the launcher was told to stop (SIGTERM: its Pod deleted, or its
	// container stopped by the kubelet after a failed liveness probe).
	Terminated bool `json:"terminated,omitempty"`
	// GuestOS is the guest's operating system as its agent last said it (status.guestOSInfo).
	GuestOS *v1.VirtualMachineInstanceGuestOSInfo `json:"guestOS,omitempty"`
	// Frozen is true while the guest's filesystems are frozen by the freeze action: from a
	// freeze until an unfreeze or the thaw at the freeze's timeout (status.fsFreezeStatus).
	Frozen bool `json:"frozen,omitempty"`
	// Since is when the phase last changed.
	Since time.Time `json:"since"`
}

// FreezeRequest asks for the guest's filesystems to be frozen.
type FreezeRequest struct {
	// UnfreezeTimeout is when the launcher thaws them if no Unfreeze came first.
	UnfreezeTimeout time.Duration `json:"unfreezeTimeout"`
}

// CredentialsStatus is how applying access credentials through the guest agent went.
type CredentialsStatus struct {
	// Synced is true when every credential was applied as the Secrets hold it now.
	Synced bool `json:"synced"`
	// Message says what failed when not Synced.
	Message string `json:"message,omitempty"`
}

// GuestProbeRequest is an exec or guestAgentPing probe of the guest (the VMI's readiness or
// liveness probe, which the kubelet runs as an exec probe of the launcher's container).
type GuestProbeRequest struct {
	// Ping asks for the guest agent to answer a ping.
	Ping bool `json:"ping,omitempty"`
	// Command is the program and arguments to run in the guest (without Ping); exit code 0 is healthy.
	Command []string `json:"command,omitempty"`
	// Timeout bounds the probe.
	Timeout time.Duration `json:"timeout"`
}

// Interface is one network interface of the domain.
type Interface struct {
	// Name is the interface's name in spec.domain.devices.interfaces.
	Name string `json:"name"`
	MAC  string `json:"mac"`
	// IPs are the addresses the guest is reached at: for masquerade, the Pod's.
	IPs []string `json:"ips,omitempty"`
	// GuestName is the interface's name in the guest (such as eth0), as the guest agent says;
	// empty without an agent.
	GuestName string `json:"guestName,omitempty"`
}
