package main

import (
	"context"
	"errors"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/launcher/virt"
)

// floorActions is the VM phase's floor: the VMs' domains on fresh session libvirtds, started at
// once, one suspended and resumed pauseRoundTrips times, then all shut down at once by ACPI.
func floorActions(ctx context.Context, vmis []*v1.VirtualMachineInstance, imageFile string, tcgCacheMiB uint, timeout time.Duration) (res vmActionsFloor, err error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	doms, stop, err := startFloor(ctx, vmis, imageFile, floorSpec{tcgCacheMiB: tcgCacheMiB})
	defer func() { err = errors.Join(err, stop()) }()
	if err != nil {
		return res, err
	}
	times, err := floorTimes(ctx, doms)
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
