package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/launcher/protocol"
	"github.com/vireo-dev/vireo/launcher/virt"
)

// floorActions is the VM phase's floor: the VMs' domains on fresh session libvirtds, started at
// once, one suspended and resumed pauseRoundTrips times, then all shut down at once by ACPI.
func floorActions(ctx context.Context, vmis []*v1.VirtualMachineInstance, imageFile string, tcgCacheMiB uint, timeout time.Duration) (res vmActionsFloor, err error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	base, err := os.MkdirTemp(floorTmp, floorDirPrefix)
	if err != nil {
		return res, err
	}
	doms := make([]*floorDomain, len(vmis))
	defer func() { err = errors.Join(err, stopFloor(doms), os.RemoveAll(base)) }()
	if err := os.Chmod(base, 0o755); err != nil {
		return res, err
	}
	image, err := copyImage(imageFile, filepath.Join(base, "image"))
	if err != nil {
		return res, err
	}
	for i, vmi := range vmis {
		d := &floorDomain{vmi: vmi, netns: fmt.Sprintf("%s%d", floorNetnsPrefix, i), dir: filepath.Join(base, fmt.Sprintf("d%d", i))}
		doms[i] = d
		if err := d.prepare(ctx, image, tcgCacheMiB); err != nil {
			return res, fmt.Errorf("floor domain %d: %w", i, err)
		}
	}
	say("VM floor: %d fresh session libvirtd, then the domains started at once", len(doms))
	if err := forEach(doms, func(d *floorDomain) error { return d.startDaemon(ctx) }); err != nil {
		return res, err
	}
	t0 := time.Now()
	for _, d := range doms {
		d.console = watchConsole(ctx, filepath.Join(d.dir, protocol.ConsoleSocket))
	}
	_ = forEach(doms, func(d *floorDomain) error {
		_, d.startErr = d.conn.Start(ctx, d.xml)
		d.started = time.Now()
		return nil
	})
	times, err := floorTimes(ctx, doms, t0)
	if err != nil {
		return res, err
	}
	res.StartReturned, res.StartToMarker = times.StartReturned, times.Marker
	name := domainName(doms[0])
	var trips []time.Duration
	for range pauseRoundTrips {
		began := time.Now()
		if err := doms[0].conn.Pause(ctx, name); err != nil {
			return res, err
		}
		if err := doms[0].conn.Resume(ctx, name); err != nil {
			return res, err
		}
		trips = append(trips, time.Since(began))
	}
	res.PauseRoundTrip = summarize(trips)
	gone := make([]time.Duration, len(doms))
	err = forEach(doms, func(d *floorDomain) error {
		began := time.Now()
		if err := d.conn.Shutdown(ctx, domainName(d)); err != nil {
			return err
		}
		err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			_, _, err := d.conn.State(ctx, domainName(d))
			return errors.Is(err, virt.ErrNotFound), nil
		})
		gone[slices.Index(doms, d)] = time.Since(began)
		return err
	})
	res.ShutdownToGone = summarize(gone)
	return res, err
}

// domainName is the name of the floor domain's libvirt domain (as the launcher names it).
func domainName(d *floorDomain) string { return d.vmi.Namespace + "_" + d.vmi.Name }
