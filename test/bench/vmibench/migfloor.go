package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/launcher/domain"
	"github.com/vireo-dev/vireo/launcher/protocol"
	"github.com/vireo-dev/vireo/launcher/virt"
)

// The migration floor: the same guest (the domain the launcher builds for the VMI, as the
// lifecycle floor builds it) migrates between fresh session libvirtds on this machine, each as
// uid 107 in a network namespace of its own with QEMU's capabilities seeded from a node's
// cache as launchers are: no Kubernetes, no node agents, no TLS, no proxies. Each migration
// starts a new target daemon, prepares the target's disks (a fresh containerDisk overlay for
// the copy to fill), and runs the launcher's very libvirt call (virt.Conn.Migrate: live,
// peer-to-peer, the writable local disks copied over NBD) over unix sockets straight to it.

// migFloor is the chain of daemons the guest migrates along.
type migFloor struct {
	base, image, seed string
	vmi               *v1.VirtualMachineInstance
	tcgCacheMiB       uint
	cur               *floorDomain
	n                 int
	paused            bool
}

// startMigrationFloor boots vmi's guest on a fresh daemon. The floor it returns is to be
// closed even when it comes with an error.
func startMigrationFloor(ctx context.Context, e *env, vmi *v1.VirtualMachineInstance, imageFile string) (*migFloor, error) {
	f := &migFloor{vmi: vmi, tcgCacheMiB: e.c.tcgCacheMiB,
		seed: filepath.Join(e.cluster.Options().NodeDir(e.cluster.NodeNames()[0]), "host", "var", "lib", "vireo", "capabilities")}
	var err error
	if f.base, err = os.MkdirTemp(floorTmp, floorDirPrefix); err != nil {
		return f, err
	}
	if err := os.Chmod(f.base, 0o755); err != nil {
		return f, err
	}
	if f.image, err = layOutImages([]*v1.VirtualMachineInstance{vmi}, imageFile, filepath.Join(f.base, "containerdisks")); err != nil {
		return f, err
	}
	say("direct migrations: booting the guest on a fresh libvirtd")
	if f.cur, err = f.newDomain(ctx); err != nil {
		return f, err
	}
	return f, f.boot(ctx)
}

// close stops the guest and its daemon and removes the floor's files.
func (f *migFloor) close() error {
	if f == nil || f.base == "" {
		return nil
	}
	return errors.Join(stopFloor([]*floorDomain{f.cur}), os.RemoveAll(f.base))
}

// pause suspends (or resumes) the guest unless it already is.
func (f *migFloor) pause(ctx context.Context, pause bool) error {
	if f.paused == pause {
		return nil
	}
	op, action := f.cur.conn.Resume, "resuming"
	if pause {
		op, action = f.cur.conn.Pause, "suspending"
	}
	if err := op(ctx, domain.DomainName(f.vmi)); err != nil {
		return fmt.Errorf("direct migrations: %s the guest: %w", action, err)
	}
	f.paused = pause
	return nil
}

// newDomain prepares the next domain of the chain (its own directory, disks and network
// namespace, alternating between two names) and starts its daemon.
func (f *migFloor) newDomain(ctx context.Context) (*floorDomain, error) {
	d := &floorDomain{vmi: f.vmi, netns: fmt.Sprintf("%smig%d", floorNetnsPrefix, f.n%2), dir: filepath.Join(f.base, fmt.Sprintf("m%d", f.n))}
	f.n++
	if err := d.prepare(ctx, f.image, f.tcgCacheMiB); err != nil {
		return d, err
	}
	daemon, err := startDaemonIn(ctx, d.netns, virt.DaemonConfig{Dir: d.dir, CapabilitiesSeed: f.seed,
		Credential: &syscall.Credential{Uid: launcherUID, Gid: launcherUID}})
	if err != nil {
		return d, err
	}
	d.daemon = daemon
	d.conn, err = daemon.Connect(ctx)
	return d, err
}

// boot starts the first domain and waits for the guest's marker.
func (f *migFloor) boot(ctx context.Context) error {
	d := f.cur
	d.console = watchConsole(ctx, filepath.Join(d.dir, protocol.ConsoleSocket))
	if _, err := d.conn.Start(ctx, d.xml); err != nil {
		return fmt.Errorf("starting the guest: %w; QEMU's log: %s", err, d.qemuLog())
	}
	select {
	case <-d.console.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	if _, m, err := d.console.result(); m.IsZero() {
		return fmt.Errorf("the guest never printed %s (%v); console: %q", guestMarker, err, d.console.output())
	}
	return nil
}

// startDirtier types the dirtier on the current domain's console and waits for its answer.
func (f *migFloor) startDirtier(ctx context.Context, dirtyMiB int) error {
	d := f.cur
	if d.console != nil {
		d.console.close()
	}
	conn, err := dialUnix(filepath.Join(d.dir, protocol.ConsoleSocket))
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := conn.Write([]byte(dirtierCommand(dirtyMiB))); err != nil {
		return err
	}
	var seen strings.Builder
	buf := make([]byte, 4096)
	for !strings.Contains(seen.String(), "DIRTY42") {
		n, err := conn.Read(buf)
		if err != nil {
			return fmt.Errorf("starting the memory dirtier: %w; console: %q", err, seen.String())
		}
		seen.Write(buf[:n])
	}
	return ctx.Err()
}

// migrate moves the guest from the current domain to a new one and makes that the current.
func (f *migFloor) migrate(ctx context.Context) (migrationSample, error) {
	var s migrationSample
	src, name := f.cur, domain.DomainName(f.vmi)
	cpu0, err := takeCPUSnapshot()
	if err != nil {
		return s, err
	}
	began := time.Now()
	dst, err := f.newDomain(ctx)
	if err != nil {
		_ = stopFloor([]*floorDomain{dst})
		return s, err
	}
	s.Setup = time.Since(began)
	xml, err := src.conn.MigrationXML(ctx, name)
	var copyDisks []string
	if err == nil {
		copyDisks, _, err = domain.MigrationDisks(xml, src.dir, protocol.ClaimsDir, "/proc/self/fd")
	}
	if err == nil {
		err = src.conn.Migrate(ctx, name, virt.MigrateParams{LibvirtSocket: dst.daemon.Layout().Socket,
			QEMUSocket: filepath.Join(dst.dir, protocol.MigrationQEMUSocket), DisksSocket: filepath.Join(dst.dir, protocol.MigrationDisksSocket),
			CopyDisks: copyDisks, DestinationXML: strings.ReplaceAll(xml, src.dir+"/", dst.dir+"/")})
	}
	s.Total = time.Since(began)
	if err == nil {
		s.CPU, err = cpuSince(cpu0)
	}
	if err != nil {
		_ = stopFloor([]*floorDomain{dst})
		return s, fmt.Errorf("migrating: %w; target QEMU's log: %s", err, dst.qemuLog())
	}
	stats, err := dst.conn.JobStats(ctx, name, true)
	if err != nil {
		return s, err
	}
	s.Transfer, s.Downtime = time.Duration(stats.ElapsedMs)*time.Millisecond, time.Duration(stats.DowntimeMs)*time.Millisecond
	s.Bytes = float64(stats.DataProcessed)
	f.cur = dst
	return s, stopFloor([]*floorDomain{src})
}
