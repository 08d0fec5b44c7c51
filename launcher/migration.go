package launcher

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/launcher/disks"
	"github.com/vireo-dev/vireo/launcher/domain"
	"github.com/vireo-dev/vireo/launcher/protocol"
	"github.com/vireo-dev/vireo/launcher/virt"
)

// PrepareTarget makes this launcher the target of a migration of the VMI: it prepares the
// disks as for a start (the copy fills the local ones), starts no domain and serves its
// libvirtd on the migration socket of its directory, where the node agent's proxy reaches it.
func (l *launcher) PrepareTarget(ctx context.Context, req *protocol.SyncRequest) (*protocol.DomainStatus, error) {
	if err := l.checkSync(req); err != nil {
		return nil, err
	}
	l.mu.Lock()
	switch {
	case l.started && l.target:
		l.mu.Unlock()
		st := l.hub.get()
		return &st, nil
	case l.started:
		l.mu.Unlock()
		return nil, status.Error(codes.FailedPrecondition, "this launcher already runs the guest: it cannot be a migration's target")
	}
	l.started, l.target = true, true
	l.credentials = req.VMI.Spec.AccessCredentials
	l.mu.Unlock()
	if l.refusal != "" {
		l.hub.end(protocol.DomainFailed, v1.ReasonEmulationNotAllowed, l.refusal)
		return nil, errors.New(l.refusal)
	}
	l.hub.update(func(st *protocol.DomainStatus) {
		st.Migration = &protocol.MigrationStatus{Phase: protocol.MigrationPreparing}
	})
	began := time.Now()
	_, retry, err := l.prepare(ctx, req)
	disksReady := time.Since(began)
	if err == nil {
		if err = l.startGuestNetwork(req.VMI); err != nil {
			retry = true
		}
	}
	if err == nil {
		if err = l.awaitLibvirt(ctx); err != nil {
			// A caller that gave up may try again; a libvirtd that did not start will not.
			retry = ctx.Err() != nil
		}
	}
	if err != nil {
		if retry {
			l.mu.Lock()
			l.started, l.target = false, false
			l.mu.Unlock()
			return nil, err
		}
		l.hub.end(protocol.DomainFailed, v1.ReasonSyncFailed, err.Error())
		return nil, err
	}
	sock := filepath.Join(l.dir, protocol.MigrationLibvirtSocket)
	_ = os.Remove(sock)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return nil, fmt.Errorf("listening for the migration: %w", err)
	}
	go serveSplice(ln, l.daemon.Layout().Socket)
	l.hub.update(func(st *protocol.DomainStatus) { st.Migration.Phase = protocol.MigrationReady })
	klog.InfoS("Ready to receive the guest by migration", "socket", sock, "disksPrepared", disksReady.Round(time.Millisecond),
		"took", time.Since(began).Round(time.Millisecond))
	st := l.hub.get()
	return &st, nil
}

// serveSplice connects every connection accepted on ln to the unix socket target.
func serveSplice(ln net.Listener, target string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			t, err := net.Dial("unix", target)
			if err != nil {
				klog.ErrorS(err, "Migration connection refused", "target", target)
				return
			}
			defer t.Close()
			done := make(chan struct{}, 2)
			go func() { _, _ = io.Copy(t, c); done <- struct{}{} }()
			go func() { _, _ = io.Copy(c, t); done <- struct{}{} }()
			<-done
		}()
	}
}

// arrived records the guest's arrival on this target launcher: its domain's name and the
// statistics of the migration that brought it.
func (l *launcher) arrived(ctx context.Context, name string) {
	l.mu.Lock()
	if !l.target || l.name != "" {
		l.mu.Unlock()
		return
	}
	l.name = name
	l.mu.Unlock()
	now := time.Now()
	stats := l.completedMigrationStats(ctx, name)
	l.hub.update(func(st *protocol.DomainStatus) {
		st.Migration = &protocol.MigrationStatus{Phase: protocol.MigrationCompleted, End: &now, DowntimeMs: stats.DowntimeMs,
			ElapsedMs: stats.ElapsedMs, DataTotal: stats.DataTotal, DataProcessed: stats.DataProcessed}
	})
	klog.InfoS("The guest arrived by migration", "domain", name, "downtimeMs", stats.DowntimeMs, "elapsedMs", stats.ElapsedMs)
	if l.opts.VCPUNice > 0 {
		if n, err := l.daemon.LowerVCPUPriority(name, l.opts.VCPUNice); err != nil {
			klog.ErrorS(err, "The guest's vCPUs keep their priority", "changed", n)
		}
	}
}

// completedMigrationStats reads the statistics of the migration that brought the domain. libvirt
// records them when it finishes the incoming job, just after the guest resumed here, so they
// are read again for a few seconds until they are there. The arrival waits for them (its report
// is what ends the migration for the node agents), so they are read often.
func (l *launcher) completedMigrationStats(ctx context.Context, name string) virt.JobStats {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(5 * time.Second)
	for {
		stats, err := l.conn.JobStats(ctx, name, true)
		if err == nil && stats.ElapsedMs > 0 {
			return stats
		}
		select {
		case <-tick.C:
		case <-deadline:
			klog.ErrorS(err, "No statistics of the completed migration")
			return stats
		case <-ctx.Done():
			return stats
		}
	}
}

// Migrate starts the live migration of the running guest to the target the node agent
// proxies into this launcher's directory; DomainStatus.Migration reports how it goes.
func (l *launcher) Migrate(_ context.Context, req *protocol.MigrateRequest) (*protocol.Empty, error) {
	name := l.domainName()
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case name == "":
		// A target launcher runs the guest (and may pass it on) once it arrived.
		return nil, status.Error(codes.FailedPrecondition, "VMI is not running in this launcher: nothing to migrate")
	case l.migration != nil && l.migration.UID == req.MigrationUID:
		return &protocol.Empty{}, nil
	case l.migration != nil && !l.migration.ended:
		return nil, status.Errorf(codes.FailedPrecondition, "migration %s is still running", l.migration.UID)
	}
	now := time.Now()
	l.migration = &migrationRun{UID: req.MigrationUID, abort: make(chan string, 1)}
	l.hub.update(func(st *protocol.DomainStatus) {
		st.Migration = &protocol.MigrationStatus{UID: req.MigrationUID, Phase: protocol.MigrationRunning, Mode: protocol.ModePreCopy, Start: &now}
	})
	go l.runMigration(name, *req, l.migration)
	return &protocol.Empty{}, nil
}

// AbortMigration aborts the running migration; the guest stays here.
func (l *launcher) AbortMigration(ctx context.Context, _ *protocol.Empty) (*protocol.Empty, error) {
	l.mu.Lock()
	run := l.migration
	running := run != nil && !run.ended
	l.mu.Unlock()
	if !running {
		return nil, status.Error(codes.FailedPrecondition, "no migration is running")
	}
	run.abortRequested.Store(true)
	select {
	case run.abort <- "aborted on request":
	default:
	}
	return &protocol.Empty{}, nil
}

// migrationRun is the launcher's running migration.
type migrationRun struct {
	UID   string
	abort chan string // a reason to abort
	ended bool        // guarded by launcher.mu
	// abortRequested: the node agent asked to abort (AbortMigration).
	abortRequested atomic.Bool
	// preCopyOnly: the target cannot run post-copy, so the migration runs without it.
	preCopyOnly atomic.Bool
}

// postCopyUnsupported is QEMU's refusal of post-copy when it cannot have a userfaultfd (as
// the unprivileged qemu user with the kernel's vm.unprivileged_userfaultfd at 0, its default).
const postCopyUnsupported = "Postcopy is not supported"

// migrate runs libvirt's migration. allowPostCopy allows post-copy, it does not require it:
// when the target's QEMU refuses it, the migration runs again in pre-copy alone instead of
// failing (KubeVirt fails every migration then), and the log says why.
func (l *launcher) migrate(ctx context.Context, name string, p virt.MigrateParams, run *migrationRun) error {
	err := l.conn.Migrate(ctx, name, p)
	if err == nil || !p.PostCopy || !strings.Contains(err.Error(), postCopyUnsupported) || run.abortRequested.Load() || ctx.Err() != nil {
		return err
	}
	klog.InfoS("The target's QEMU cannot run post-copy (it needs a userfaultfd: set the target node's sysctl vm.unprivileged_userfaultfd=1); migrating in pre-copy alone",
		"migration", run.UID, "err", err)
	run.preCopyOnly.Store(true)
	l.hub.update(func(st *protocol.DomainStatus) {
		if m := st.Migration; m != nil && m.UID == run.UID {
			m.PostCopyUnavailable = err.Error()
		}
	})
	p.PostCopy = false
	return l.conn.Migrate(ctx, name, p)
}

// runMigration runs libvirt's migration while watching its progress and reports the end.
func (l *launcher) runMigration(name string, req protocol.MigrateRequest, run *migrationRun) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := virt.MigrateParams{
		LibvirtSocket: filepath.Join(l.dir, protocol.MigrationLibvirtSocket),
		QEMUSocket:    filepath.Join(l.dir, protocol.MigrationQEMUSocket),
		DisksSocket:   filepath.Join(l.dir, protocol.MigrationDisksSocket),
		BandwidthMiB:  req.BandwidthMiB, AutoConverge: req.AllowAutoConverge, PostCopy: req.AllowPostCopy,
	}
	xml, err := l.conn.MigrationXML(ctx, name)
	if err == nil {
		// The target opens the images this guest runs on, not what their tags name now.
		var live string
		if live, err = l.conn.LiveXML(ctx, name); err == nil {
			xml, err = domain.PinBackingChains(xml, live)
		}
	}
	if err == nil {
		p.DestinationXML = xml
		var shared []string
		p.CopyDisks, shared, err = domain.MigrationDisks(xml, l.opts.PrivateDir, protocol.ClaimsDir, disks.HeldFilesDir())
		// libvirt refuses to leave a disk on a local file system in place; a claim is one
		// only Vireo knows to be shared (ReadWriteMany, or the VMI would not be migratable).
		p.SharedDisks = len(shared) > 0
	}
	var aborted string
	if err == nil {
		watchDone := make(chan string, 1)
		go func() { watchDone <- l.watchMigration(ctx, name, req, run) }()
		klog.InfoS("Migrating the guest", "migration", req.MigrationUID, "copyDisks", p.CopyDisks, "bandwidthMiB", req.BandwidthMiB)
		err = l.migrate(ctx, name, p, run)
		cancel()
		aborted = <-watchDone
	}
	now := time.Now()
	l.mu.Lock()
	run.ended = true
	stop := l.stopAfterMigration
	l.mu.Unlock()
	l.hub.update(func(st *protocol.DomainStatus) {
		m := st.Migration
		if m == nil || m.UID != req.MigrationUID || m.Ended() {
			return
		}
		m.End = &now
		switch {
		case err == nil:
			m.Phase = protocol.MigrationCompleted
		case aborted != "":
			m.Phase, m.Aborted, m.Failure = protocol.MigrationFailed, true, "Live migration "+aborted+": "+err.Error()
		default:
			m.Phase, m.Failure = protocol.MigrationFailed, "Live migration failed: "+err.Error()
		}
	})
	klog.InfoS("Migration ended", "migration", req.MigrationUID, "err", err, "aborted", aborted)
	// The migration's outcome is the status's: libvirt can drop the call of a migration that
	// completed (the guest's departure ends the domain first).
	if m := l.hub.get().Migration; stop && (m == nil || m.Phase != protocol.MigrationCompleted) {
		klog.InfoS("Terminating: the guest stayed here; shutting it down")
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		if _, serr := l.Shutdown(sctx, nil); serr != nil {
			klog.ErrorS(serr, "ACPI shutdown")
		}
	}
}

// watchMigration follows the migration job every half second until ctx ends: it reports its
// progress and aborts it (or switches to post-copy) when a timeout passes or an abort is
// requested. It returns why it aborted ("" when it did not).
func (l *launcher) watchMigration(ctx context.Context, name string, req protocol.MigrateRequest, run *migrationRun) string {
	w := newProgressWatch(req, time.Now())
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	aborted := ""
	for {
		select {
		case <-ctx.Done():
			return aborted
		case reason := <-run.abort:
			if aborted == "" {
				aborted = reason
				l.hub.update(func(st *protocol.DomainStatus) {
					if st.Migration != nil {
						st.Migration.AbortRequested = true
					}
				})
				if err := l.conn.AbortJob(ctx, name); err != nil {
					klog.ErrorS(err, "Aborting the migration")
				}
			}
		case now := <-tick.C:
			stats, err := l.conn.JobStats(ctx, name, false)
			if err != nil || !stats.Active {
				continue
			}
			l.reportProgress(stats)
			w.req.AllowPostCopy = req.AllowPostCopy && !run.preCopyOnly.Load()
			switch action := w.check(stats, now); {
			case action == actionPostCopy:
				klog.InfoS("Switching the migration to post-copy", "migration", req.MigrationUID)
				if err := l.conn.StartPostCopy(ctx, name); err != nil {
					// The watch stops timing a migration in post-copy: one that could not
					// switch is aborted, or it could run for ever.
					klog.ErrorS(err, "Switching to post-copy failed; aborting", "migration", req.MigrationUID)
					select {
					case run.abort <- "aborted: not completed in time, and switching to post-copy failed: " + err.Error():
					default:
					}
					continue
				}
				l.hub.update(func(st *protocol.DomainStatus) {
					if st.Migration != nil {
						st.Migration.Mode = protocol.ModePostCopy
					}
				})
			case action != "":
				select {
				case run.abort <- action:
				default:
				}
			}
		}
	}
}

func (l *launcher) reportProgress(s virt.JobStats) {
	l.hub.update(func(st *protocol.DomainStatus) {
		if m := st.Migration; m != nil && m.Phase == protocol.MigrationRunning {
			m.DataTotal, m.DataProcessed, m.DataRemaining = s.DataTotal, s.DataProcessed, s.DataRemaining
			m.MemoryDirtyRate, m.MemoryBps = s.MemoryDirtyRate, s.MemoryBps
		}
	})
}
