package virt

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	libvirt "github.com/digitalocean/go-libvirt"
)

// TestTransientDomainMigratesToAnEmptyTarget checks the choice of transient domains: a
// peer-to-peer live migration (what the migration issue will drive) needs nothing defined on
// the target daemon, the target reports Started/Resumed (migrated), and the source domain is
// gone afterwards without an undefine.
func TestTransientDomainMigratesToAnEmptyTarget(t *testing.T) {
	skipUnlessProcesses(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	src, dst := startTestDaemon(t, ""), startTestDaemon(t, "")
	sc, dc := connectTest(t, src), connectTest(t, dst)
	srcEvents, err := sc.Events(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dstEvents, err := dc.Events(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dom, err := sc.Start(ctx, testDomainXML("vm", filepath.Join(src.Layout().Dir, "serial.sock")))
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	waitEvent(t, srcEvents, "vm", EventStarted, 30*time.Second)

	// The destination XML carries the target's own socket paths and the domain's UUID.
	destXML := strings.Replace(testDomainXML("vm", filepath.Join(dst.Layout().Dir, "serial.sock")),
		"<name>vm</name>", "<name>vm</name><uuid>"+dom.UUID+"</uuid>", 1)
	err = sc.call(ctx, "migrate domain", "vm", func() error {
		d, err := sc.l.DomainLookupByName("vm")
		if err != nil {
			return err
		}
		params := []libvirt.TypedParam{
			{Field: libvirt.MigrateParamDestXML, Value: *libvirt.NewTypedParamValueString(destXML)},
			{Field: libvirt.MigrateParamURI, Value: *libvirt.NewTypedParamValueString("unix://" + filepath.Join(dst.Layout().Dir, "mig.sock"))},
		}
		_, err = sc.l.DomainMigratePerform3Params(d, libvirt.OptString{"qemu+unix:///session?socket=" + dst.Layout().Socket},
			params, nil, libvirt.MigrateLive|libvirt.MigratePeer2peer)
		return err
	})
	if err != nil {
		t.Fatalf("migrate: %v", err)
	}
	if ev := waitEvent(t, dstEvents, "vm", EventStarted, 30*time.Second); ev.Reason != ReasonMigrated {
		t.Errorf("target started event %v, want reason migrated", ev)
	}
	if ev := waitEvent(t, dstEvents, "vm", EventResumed, 30*time.Second); ev.Reason != ReasonMigrated {
		t.Errorf("target resumed event %v, want reason migrated", ev)
	}
	if ev := waitEvent(t, srcEvents, "vm", EventStopped, 30*time.Second); ev.Reason != ReasonMigrated {
		t.Errorf("source stopped event %v, want reason migrated", ev)
	}
	if _, _, err := sc.State(ctx, "vm"); !errors.Is(err, ErrNotFound) {
		t.Errorf("source State after migration: %v, want ErrNotFound", err)
	}
	if s, _, err := dc.State(ctx, "vm"); err != nil || s != StateRunning {
		t.Errorf("target State after migration: %v, %v", s, err)
	}
}

// TestMigrateCopiesLocalDisks migrates a domain with a writable qcow2 disk through Migrate:
// the disk is copied over NBD on a unix socket (disks_uri) into the target's own file, which
// the destination XML names, and the completed job's statistics are readable on the target.
func TestMigrateCopiesLocalDisks(t *testing.T) {
	skipUnlessProcesses(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	src, dst := startTestDaemon(t, ""), startTestDaemon(t, "")
	sc, dc := connectTest(t, src), connectTest(t, dst)
	dstEvents, err := dc.Events(ctx)
	if err != nil {
		t.Fatal(err)
	}
	srcDisk, dstDisk := filepath.Join(src.Layout().Dir, "disk.qcow2"), filepath.Join(dst.Layout().Dir, "disk.qcow2")
	for _, p := range []string{srcDisk, dstDisk} {
		if out, err := exec.CommandContext(ctx, "qemu-img", "create", "-f", "qcow2", p, "16M").CombinedOutput(); err != nil {
			t.Fatalf("qemu-img: %v: %s", err, out)
		}
		chownTestUser(t, p)
	}
	withDisk := func(xml, disk string) string {
		return strings.Replace(xml, "<serial", "<disk type='file' device='disk'><driver name='qemu' type='qcow2'/><source file='"+disk+"'/><target dev='vda' bus='virtio'/></disk><serial", 1)
	}
	if _, err := sc.Start(ctx, withDisk(testDomainXML("vm", filepath.Join(src.Layout().Dir, "serial.sock")), srcDisk)); err != nil {
		t.Fatalf("Start: %v", err)
	}
	xml, err := sc.MigrationXML(ctx, "vm")
	if err != nil {
		t.Fatal(err)
	}
	destXML := strings.ReplaceAll(xml, src.Layout().Dir, dst.Layout().Dir)
	err = sc.Migrate(ctx, "vm", MigrateParams{LibvirtSocket: dst.Layout().Socket,
		QEMUSocket: filepath.Join(dst.Layout().Dir, "mig.sock"), DisksSocket: filepath.Join(dst.Layout().Dir, "nbd.sock"),
		CopyDisks: []string{"vda"}, DestinationXML: destXML})
	if err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	waitEvent(t, dstEvents, "vm", EventResumed, 30*time.Second)
	stats, err := dc.JobStats(ctx, "vm", true)
	if err != nil {
		t.Fatal(err)
	}
	if stats.DataProcessed == 0 || stats.ElapsedMs == 0 {
		t.Errorf("completed job statistics on the target: %+v", stats)
	}
	t.Logf("completed migration: %+v", stats)
}
