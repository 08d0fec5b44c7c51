package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sync"
	"text/tabwriter"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/launcherpodapi"
	"github.com/vireo-dev/vireo/launcher/protocol"
)

// pauseRoundTrips is how many pause+unpause pairs are timed, one after the other.
const pauseRoundTrips = 20

// vmActionsResult is what the VM phase measured: n VMs started and then stopped at once through
// their subresources (kube-apiserver -> vireo-apiserver, as virtctl does), and pause+unpause
// round trips of one VMI, against the same operations on bare libvirt in this run.
type vmActionsResult struct {
	VMs int `json:"vms"`
	// StartToRunning: PUT start -> the VM's printableStatus Running; StartToMarker -> the guest's
	// boot marker; StopToStopped: PUT stop -> printableStatus Stopped with the VMI gone.
	StartToRunning durations `json:"startToRunning"`
	StartToMarker  durations `json:"startToMarker"`
	StopToStopped  durations `json:"stopToStopped"`
	// PauseRoundTrip: PUT pause then PUT unpause, each answered once the launcher acted.
	PauseRoundTrip durations      `json:"pauseUnpauseRoundTrip"`
	Floor          vmActionsFloor `json:"floor"`
}

// vmActionsFloor is the same on bare libvirt: a fresh session libvirtd per domain (built from
// the VMs' own VMIs), the domains started at once, shut down at once by ACPI, and one paused and
// resumed through libvirt's API.
type vmActionsFloor struct {
	StartReturned  durations `json:"startReturned"`
	StartToMarker  durations `json:"startToMarker"`
	ShutdownToGone durations `json:"acpiShutdownToGone"`
	PauseRoundTrip durations `json:"suspendResumeRoundTrip"`
}

// vmActions runs the VM phase with n VMs of the tiny template.
func (e *env) vmActions(ctx context.Context, n int) (res vmActionsResult, err error) {
	res.VMs = n
	names, deleteVMs, err := e.createHaltedVMs(ctx, "vm", n)
	defer func() { err = errors.Join(err, deleteVMs()) }()
	if err != nil {
		return res, err
	}
	say("VMs: starting %d at once through the start subresource", n)
	consoles := &vmConsoles{e: e, watches: map[string]*consoleWatch{}}
	defer consoles.close()
	running, markers, err := e.timeAction(ctx, names, "start", func(vm *v1.VirtualMachine, vmi *v1.VirtualMachineInstance) bool {
		consoles.watch(ctx, vmi)
		return vm.Status.PrintableStatus == v1.VirtualMachineStatusRunning
	}, consoles)
	if err != nil {
		return res, err
	}
	res.StartToRunning, res.StartToMarker = summarize(running), summarize(markers)
	objs, err := e.vmis(ctx, names)
	if err != nil {
		return res, err
	}
	say("VMs: %d pause+unpause round trips of %s through aggregation", pauseRoundTrips, names[0])
	if res.PauseRoundTrip, err = e.pauseRoundTrips(ctx, names[0]); err != nil {
		return res, err
	}
	say("VMs: stopping %d at once through the stop subresource", n)
	stopped, _, err := e.timeAction(ctx, names, "stop", func(vm *v1.VirtualMachine, vmi *v1.VirtualMachineInstance) bool {
		return vm.Status.PrintableStatus == v1.VirtualMachineStatusStopped && vmi == nil
	}, nil)
	if err != nil {
		return res, err
	}
	res.StopToStopped = summarize(stopped)
	res.Floor, err = floorActions(ctx, objs, e.c.containerDiskFile(), e.c.tcgCacheMiB, e.c.startTimeout)
	return res, err
}

// createHaltedVMs creates n VirtualMachines of the benchmark's template in its namespace, named
// prefix-0 to prefix-(n-1), halted (runStrategy Halted). deleteVMs deletes those it created, also
// when a later one could not be.
func (e *env) createHaltedVMs(ctx context.Context, prefix string, n int) (names []string, deleteVMs func() error, err error) {
	vms := e.cl.vireo.KubevirtV1().VirtualMachines(benchNS)
	deleteVMs = func() error {
		var errs error
		for _, name := range names {
			errs = errors.Join(errs, ignoreNotFound(vms.Delete(context.WithoutCancel(ctx), name, metav1.DeleteOptions{})))
		}
		return errs
	}
	halted := v1.RunStrategyHalted
	for i := range n {
		vm := &v1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", prefix, i)}, Spec: v1.VirtualMachineSpec{RunStrategy: &halted,
			Template: &v1.VirtualMachineInstanceTemplateSpec{Spec: *e.template.Spec.DeepCopy()}}}
		if _, err := vms.Create(ctx, vm, metav1.CreateOptions{}); err != nil {
			return names, deleteVMs, err
		}
		names = append(names, vm.Name)
	}
	return names, deleteVMs, nil
}

// timeAction PUTs action to every VM at once and returns, per VM, the time from its PUT until
// done holds for it (and, with consoles, until its guest printed the marker).
func (e *env) timeAction(ctx context.Context, names []string, action string, done func(*v1.VirtualMachine, *v1.VirtualMachineInstance) bool,
	consoles *vmConsoles) (took, markers []time.Duration, err error) {
	sent := make([]time.Time, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sent[i] = time.Now()
			errs[i] = e.put(ctx, "virtualmachines", name, action)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	finished := map[string]time.Time{}
	wctx, cancel := context.WithTimeout(ctx, e.c.startTimeout)
	defer cancel()
	// One list of each kind per poll: the benchmark's own reads stay light next to the work.
	err = wait.PollUntilContextCancel(wctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		vms, err := e.cl.vireo.KubevirtV1().VirtualMachines(benchNS).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		vmiList, err := e.cl.vireo.KubevirtV1().VirtualMachineInstances(benchNS).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		vmis := map[string]*v1.VirtualMachineInstance{}
		for i := range vmiList.Items {
			vmis[vmiList.Items[i].Name] = &vmiList.Items[i]
		}
		for i := range vms.Items {
			vm := &vms.Items[i]
			if _, ok := finished[vm.Name]; ok || !slices.Contains(names, vm.Name) {
				continue
			}
			if done(vm, vmis[vm.Name]) {
				finished[vm.Name] = time.Now()
			}
		}
		return len(finished) == len(names) && (consoles == nil || consoles.allMarked(names)), nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %d of %d VMs done within %s", action, len(finished), len(names), e.c.startTimeout)
	}
	for i, name := range names {
		took = append(took, finished[name].Sub(sent[i]))
		if consoles != nil {
			markers = append(markers, consoles.marker(name).Sub(sent[i]))
		}
	}
	return took, markers, nil
}

// pauseRoundTrips times pause+unpause pairs of VMI name through kube-apiserver.
func (e *env) pauseRoundTrips(ctx context.Context, name string) (durations, error) {
	var trips []time.Duration
	for range pauseRoundTrips {
		began := time.Now()
		if err := e.put(ctx, "virtualmachineinstances", name, "pause"); err != nil {
			return durations{}, err
		}
		if err := e.put(ctx, "virtualmachineinstances", name, "unpause"); err != nil {
			return durations{}, err
		}
		trips = append(trips, time.Since(began))
	}
	return summarize(trips), nil
}

// put sends an action at KubeVirt's subresources.kubevirt.io path.
func (e *env) put(ctx context.Context, resource, name, action string) error {
	return e.cl.vireo.KubevirtV1().RESTClient().Put().
		AbsPath("/apis/subresources.kubevirt.io/v1/namespaces", benchNS, resource, name, action).
		Body([]byte("{}")).Do(ctx).Error()
}

// vmis reads the VMs' VMIs as the API stores them (the floor builds its domains from them).
func (e *env) vmis(ctx context.Context, names []string) ([]*v1.VirtualMachineInstance, error) {
	var out []*v1.VirtualMachineInstance
	for _, name := range names {
		vmi, err := e.cl.vireo.KubevirtV1().VirtualMachineInstances(benchNS).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		out = append(out, vmi)
	}
	return out, nil
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// vmConsoles watches the serial consoles of the VMs' VMIs from the moment their launcher Pod
// is known, so the boot marker is not missed.
type vmConsoles struct {
	e       *env
	mu      sync.Mutex
	watches map[string]*consoleWatch
}

func (c *vmConsoles) watch(ctx context.Context, vmi *v1.VirtualMachineInstance) {
	if vmi == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.watches[vmi.Name] != nil {
		return
	}
	for uid, node := range vmi.Status.ActivePods {
		dir := filepath.Join(c.e.cluster.Options().NodeDir(node), "kubelet", "pods", protocol.EmptyDirPath(string(uid), launcherpodapi.RunDirVolumeName))
		c.watches[vmi.Name] = watchConsole(ctx, filepath.Join(dir, protocol.ConsoleSocket))
	}
}

func (c *vmConsoles) marker(name string) time.Time {
	c.mu.Lock()
	w := c.watches[name]
	c.mu.Unlock()
	if w == nil {
		return time.Time{}
	}
	_, m, _ := w.result()
	return m
}

func (c *vmConsoles) allMarked(names []string) bool {
	for _, n := range names {
		if c.marker(n).IsZero() {
			return false
		}
	}
	return true
}

func (c *vmConsoles) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, w := range c.watches {
		w.close()
	}
}

// vmActionsTable writes the VM phase against its floor: p50 and p95 and their ratios.
func vmActionsTable(w io.Writer, r *vmActionsResult) {
	if r == nil {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "\nVirtualMachines, %d at once through their subresources (kube-apiserver -> vireo-apiserver), against bare libvirt in this run:\n", r.VMs)
	fmt.Fprintf(tw, "seconds\tp50\tp95\tlibvirt p50\tlibvirt p95\tratio p50\tratio p95\t\n")
	row := func(name string, got, floor durations) {
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%.3f\t%.1f\t%.1f\t\n", name, got.P50, got.P95, floor.P50, floor.P95, ratio(got.P50, floor.P50), ratio(got.P95, floor.P95))
	}
	row("start -> Running (libvirt: Start returned)", r.StartToRunning, r.Floor.StartReturned)
	row("start -> guest marker", r.StartToMarker, r.Floor.StartToMarker)
	row("stop -> Stopped, VMI gone (libvirt: ACPI shutdown -> gone)", r.StopToStopped, r.Floor.ShutdownToGone)
	row(fmt.Sprintf("pause+unpause round trip, %d in a row (libvirt: suspend+resume)", pauseRoundTrips), r.PauseRoundTrip, r.Floor.PauseRoundTrip)
	_ = tw.Flush()
}
