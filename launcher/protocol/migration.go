package protocol

import (
	"context"
	"time"
)

// Live migration between two launchers of one VMI (protocol version 4).
//
// The target's node agent calls PrepareTarget with what Sync would carry: the target prepares
// the disks (fresh containerDisk overlays and emptyDisks for the copy to fill, the claims, the
// cloud-init disk), starts no domain, and serves its libvirtd at MigrationLibvirtSocket. The
// source's node agent then proxies the three migration sockets of the source's directory to
// the target's and calls Migrate: the source launcher runs libvirt's peer-to-peer live
// migration and reports its progress and end in DomainStatus.Migration. On success the
// source's domain ends with DomainMigrated and the target's runs. AbortMigration stops a
// running migration; the guest stays on the source.

// Socket names of a migration in a launcher's directory. On the target, its libvirtd (through
// the launcher) and its QEMU listen on them; on the source, the node agent's proxies to the
// target's do.
const (
	MigrationLibvirtSocket = "migration-libvirt.sock"
	MigrationQEMUSocket    = "migration-qemu.sock"
	MigrationDisksSocket   = "migration-disks.sock"
)

// MigrationSockets lists the migration sockets.
var MigrationSockets = []string{MigrationLibvirtSocket, MigrationQEMUSocket, MigrationDisksSocket}

// MigrationPhase is where a launcher's migration is.
type MigrationPhase string

// Migration phases.
const (
	// MigrationPreparing: the target prepares disks (target only).
	MigrationPreparing MigrationPhase = "Preparing"
	// MigrationReady: the target waits for the guest (target only).
	MigrationReady MigrationPhase = "Ready"
	// MigrationRunning: the guest's state is being sent.
	MigrationRunning MigrationPhase = "Running"
	// MigrationCompleted: the guest runs on the target.
	MigrationCompleted MigrationPhase = "Completed"
	// MigrationFailed: the migration ended without moving the guest.
	MigrationFailed MigrationPhase = "Failed"
)

// Migration modes (KubeVirt's names).
const (
	ModePreCopy  = "PreCopy"
	ModePostCopy = "PostCopy"
)

// MigrateRequest asks a running launcher to migrate its guest to the target whose sockets the
// node agent proxies into this launcher's directory. Limits come from the cluster's settings.
type MigrateRequest struct {
	// MigrationUID is the VirtualMachineInstanceMigration's UID (reported back).
	MigrationUID string `json:"migrationUID"`
	// BandwidthMiB limits the transfer in MiB/s (0: unlimited).
	BandwidthMiB uint64 `json:"bandwidthMiB,omitempty"`
	// ProgressTimeout aborts a migration whose remaining data has not shrunk for this long.
	ProgressTimeout time.Duration `json:"progressTimeout,omitempty"`
	// CompletionTimeoutPerGiB bounds the whole migration: this long per GiB of guest memory
	// and copied disk; then it switches to post-copy when allowed, else aborts.
	CompletionTimeoutPerGiB time.Duration `json:"completionTimeoutPerGiB,omitempty"`
	AllowAutoConverge       bool          `json:"allowAutoConverge,omitempty"`
	AllowPostCopy           bool          `json:"allowPostCopy,omitempty"`
}

// MigrationStatus is a launcher's view of its latest migration.
type MigrationStatus struct {
	UID   string         `json:"uid"`
	Phase MigrationPhase `json:"phase"`
	// Mode is ModePreCopy or ModePostCopy.
	Mode  string     `json:"mode,omitempty"`
	Start *time.Time `json:"start,omitempty"`
	End   *time.Time `json:"end,omitempty"`
	// Failure says why a Failed migration failed.
	Failure string `json:"failure,omitempty"`
	// AbortRequested: AbortMigration was called; Aborted: the abort stopped the migration.
	AbortRequested bool `json:"abortRequested,omitempty"`
	Aborted        bool `json:"aborted,omitempty"`
	// Progress in bytes and bytes/s (libvirt's job statistics), memory and disks together.
	DataTotal       uint64 `json:"dataTotal,omitempty"`
	DataProcessed   uint64 `json:"dataProcessed,omitempty"`
	DataRemaining   uint64 `json:"dataRemaining,omitempty"`
	MemoryDirtyRate uint64 `json:"memoryDirtyRate,omitempty"`
	MemoryBps       uint64 `json:"memoryBps,omitempty"`
	// DowntimeMs is the guest's pause at the switch-over and ElapsedMs libvirt's time for the
	// whole transfer (the target reports both, from its completed job's statistics).
	DowntimeMs uint64 `json:"downtimeMs,omitempty"`
	ElapsedMs  uint64 `json:"elapsedMs,omitempty"`
	// PostCopyUnavailable says why the migration runs without the post-copy it was allowed:
	// the target's QEMU refused it.
	PostCopyUnavailable string `json:"postCopyUnavailable,omitempty"`
}

// Ended reports whether the migration is over.
func (m *MigrationStatus) Ended() bool {
	return m != nil && (m.Phase == MigrationCompleted || m.Phase == MigrationFailed)
}

// PrepareTarget makes the launcher the target of a migration of req.VMI.
func (c *Client) PrepareTarget(ctx context.Context, req *SyncRequest) (*DomainStatus, error) {
	st := new(DomainStatus)
	return st, c.conn.Invoke(ctx, method("PrepareTarget"), req, st)
}

// Migrate starts the migration of the launcher's guest; it returns once started.
func (c *Client) Migrate(ctx context.Context, req *MigrateRequest) error {
	return c.conn.Invoke(ctx, method("Migrate"), req, &Empty{})
}

// AbortMigration aborts the running migration.
func (c *Client) AbortMigration(ctx context.Context) error {
	return c.conn.Invoke(ctx, method("AbortMigration"), &Empty{}, &Empty{})
}
