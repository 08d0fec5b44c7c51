package virt

import (
	"context"
	"fmt"

	libvirt "github.com/digitalocean/go-libvirt"
)

// MigrateParams describe a peer-to-peer live migration of a running domain to another
// launcher's libvirtd. All three connections are unix sockets in the migrating launcher's
// own mount namespace: the node agent proxies each to the target launcher, so paths are the
// same on both sides (the target's QEMU listens at QEMUSocket and DisksSocket in its own
// namespace, the source's QEMU connects to the same paths in its namespace).
type MigrateParams struct {
	// LibvirtSocket reaches the target's libvirtd (libvirt's own RPC).
	LibvirtSocket string
	// QEMUSocket carries the guest's state.
	QEMUSocket string
	// DisksSocket carries the copied disks (NBD); used only when CopyDisks is not empty.
	DisksSocket string
	// CopyDisks are the targets (vda, ...) of the disks to copy to the target: the writable
	// local disks (containerDisk overlays, emptyDisks). Disks on shared storage and read-only
	// disks are not copied; the target opens its own.
	CopyDisks []string
	// SharedDisks: writable disks that are not copied are on storage the caller knows to be
	// shared by both launchers, whatever file system libvirt sees (VIR_MIGRATE_UNSAFE: libvirt
	// refuses a disk on a local file system otherwise).
	SharedDisks bool
	// DestinationXML is the domain's XML as the target must define it.
	DestinationXML string
	// BandwidthMiB limits the transfer in MiB/s (0: unlimited).
	BandwidthMiB uint64
	// AutoConverge lets QEMU throttle the guest's vCPUs when memory is dirtied faster than sent.
	AutoConverge bool
	// PostCopy allows switching to post-copy (StartPostCopy) during the migration.
	PostCopy bool
}

// MigrationXML returns the running domain's XML fit for a migration's destination.
func (c *Conn) MigrationXML(ctx context.Context, name string) (string, error) {
	return c.xmlDesc(ctx, "get migratable XML of", name, libvirt.DomainXMLMigratable|libvirt.DomainXMLSecure)
}

// LiveXML returns the running domain's XML as libvirt keeps it, with what it detected at the
// start (the disks' backing chains among it), secrets included.
func (c *Conn) LiveXML(ctx context.Context, name string) (string, error) {
	return c.xmlDesc(ctx, "get the live XML of", name, libvirt.DomainXMLSecure)
}

func (c *Conn) xmlDesc(ctx context.Context, what, name string, flags libvirt.DomainXMLFlags) (string, error) {
	var xml string
	err := c.onDomain(ctx, what, name, func(d libvirt.Domain) error {
		var err error
		xml, err = c.l.DomainGetXMLDesc(d, flags)
		return err
	})
	return xml, err
}

// Migrate live-migrates domain name to the target described by p and returns when the
// migration ended: nil once the guest runs on the target (the transient domain is then gone
// here), an error when it failed or was aborted (the guest keeps running here). It ignores
// ctx's end once libvirt started the migration: AbortJob stops it.
func (c *Conn) Migrate(ctx context.Context, name string, p MigrateParams) error {
	flags := libvirt.MigrateLive | libvirt.MigratePeer2peer | libvirt.MigrateAbortOnError
	params := []libvirt.TypedParam{
		{Field: libvirt.MigrateParamDestXML, Value: *libvirt.NewTypedParamValueString(p.DestinationXML)},
		{Field: libvirt.MigrateParamURI, Value: *libvirt.NewTypedParamValueString("unix://" + p.QEMUSocket)},
	}
	if len(p.CopyDisks) > 0 {
		flags |= libvirt.MigrateNonSharedInc
		params = append(params, libvirt.TypedParam{Field: libvirt.MigrateParamDisksURI, Value: *libvirt.NewTypedParamValueString("unix://" + p.DisksSocket)})
		for _, d := range p.CopyDisks {
			params = append(params, libvirt.TypedParam{Field: libvirt.MigrateParamMigrateDisks, Value: *libvirt.NewTypedParamValueString(d)})
		}
	}
	if p.BandwidthMiB > 0 {
		params = append(params, libvirt.TypedParam{Field: libvirt.MigrateParamBandwidth, Value: *libvirt.NewTypedParamValueUllong(p.BandwidthMiB)})
	}
	if p.SharedDisks {
		flags |= libvirt.MigrateUnsafe
	}
	if p.AutoConverge {
		flags |= libvirt.MigrateAutoConverge
	}
	if p.PostCopy {
		flags |= libvirt.MigratePostcopy
	}
	if err := checkDomainName(name); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("virt: migrate domain %q: %w", name, err)
	}
	dom, err := c.l.DomainLookupByName(name)
	if err != nil {
		return c.wrap("migrate domain", name, err)
	}
	_, err = c.l.DomainMigratePerform3Params(dom, libvirt.OptString{"qemu+unix:///session?socket=" + p.LibvirtSocket}, params, nil, flags)
	return c.wrap("migrate domain", name, err)
}

// AbortJob aborts the domain's running job (a migration): Migrate then returns an error and
// the guest keeps running here.
func (c *Conn) AbortJob(ctx context.Context, name string) error {
	return c.onDomain(ctx, "abort the job of domain", name, func(d libvirt.Domain) error { return c.l.DomainAbortJob(d) })
}

// StartPostCopy switches a running migration started with PostCopy to post-copy: the guest
// runs on the target from now on and fetches the memory not sent yet on demand.
func (c *Conn) StartPostCopy(ctx context.Context, name string) error {
	return c.onDomain(ctx, "start post-copy of domain", name, func(d libvirt.Domain) error {
		return c.l.DomainMigrateStartPostCopy(d, 0)
	})
}

// JobStats are the statistics of a domain's migration job, in bytes, bytes/s and
// milliseconds, as libvirt reports them (zero when not reported).
type JobStats struct {
	// Active: a job runs (false when the domain has none).
	Active bool
	// ElapsedMs is how long the job has run.
	ElapsedMs uint64
	// DataTotal, DataProcessed and DataRemaining cover memory and copied disks.
	DataTotal, DataProcessed, DataRemaining uint64
	// MemoryDirtyRate is pages dirtied per second, in bytes; MemoryBps the transfer rate.
	MemoryDirtyRate, MemoryBps uint64
	// MemoryIteration counts pre-copy passes over memory.
	MemoryIteration uint64
	// DowntimeMs is the guest's pause at the switch-over (completed jobs only).
	DowntimeMs uint64
}

// JobStats returns the statistics of the domain's current job, or with completed of the
// last completed one (on a migration's target: the migration that brought the domain).
func (c *Conn) JobStats(ctx context.Context, name string, completed bool) (JobStats, error) {
	var out JobStats
	var flags libvirt.DomainGetJobStatsFlags
	if completed {
		flags = libvirt.DomainJobStatsCompleted
	}
	err := c.onDomain(ctx, "get job statistics of domain", name, func(d libvirt.Domain) error {
		typ, params, err := c.l.DomainGetJobStats(d, flags)
		if err != nil {
			return err
		}
		out = jobStatsOf(typ, params)
		return nil
	})
	return out, err
}

// jobStatsOf reads libvirt's typed parameters; typ is virDomainJobType (0: none).
func jobStatsOf(typ int32, params []libvirt.TypedParam) JobStats {
	out := JobStats{Active: typ == int32(libvirt.DomainJobBounded) || typ == int32(libvirt.DomainJobUnbounded)}
	fields := map[string]*uint64{
		libvirt.DomainJobTimeElapsed: &out.ElapsedMs, libvirt.DomainJobDataTotal: &out.DataTotal,
		libvirt.DomainJobDataProcessed: &out.DataProcessed, libvirt.DomainJobDataRemaining: &out.DataRemaining,
		libvirt.DomainJobMemoryDirtyRate: &out.MemoryDirtyRate, libvirt.DomainJobMemoryBps: &out.MemoryBps,
		libvirt.DomainJobMemoryIteration: &out.MemoryIteration, libvirt.DomainJobDowntime: &out.DowntimeMs,
	}
	for _, p := range params {
		dst, ok := fields[p.Field]
		if !ok {
			continue
		}
		switch v := p.Value.I.(type) {
		case uint64:
			*dst = v
		case int64:
			*dst = uint64(max(v, 0))
		case uint32:
			*dst = uint64(v)
		case int32:
			*dst = uint64(max(v, 0))
		}
	}
	return out
}
