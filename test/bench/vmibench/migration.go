package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/test/bench/hostproc"
)

// The migration phase: a guest of 256 MiB migrates back and forth, first idle, then while it
// rewrites a file in its RAM (a tmpfs) over and over, through Vireo (between the two nodes,
// and to a new launcher on its own node), and a second one with the same domain, disks and
// migration flags directly between fresh session libvirtds on this machine (migfloor.go), the
// two routes taking turns.

const (
	// migrationVMI is the migrating guest; migrationGuestMemory its RAM.
	migrationVMI         = "mig"
	migrationGuestMemory = "256Mi"
	// Routes of the migration table.
	routeBetweenNodes = "vireo, between nodes"
	routeInPlace      = "vireo, in place"
	routeDirect       = "direct libvirt"
	// Scenarios.
	scenarioIdle  = "idle"
	scenarioDirty = "dirtying memory"
)

// dirtierCommand starts the guest's memory dirtier: dd rewriting a file of mib MiB in the
// guest's tmpfs for ever (each pass dirties its pages again) from a file of random bytes (QEMU
// sends pages of zeros as a flag, so zeros would dirty nothing worth sending); it answers
// DIRTY42 once started.
func dirtierCommand(mib int) string {
	return fmt.Sprintf("head -c %d /dev/urandom > /tmp/random; (while :; do dd if=/tmp/random of=/tmp/dirty bs=1M conv=notrunc 2>/dev/null; done) & echo DIRTY$((40+2))\r", mib<<20)
}

// migrationSample is one migration's figures.
type migrationSample struct {
	// Total: through Vireo, the migration's creation -> its phase Succeeded; direct, a fresh
	// target libvirtd's start -> the migration call returned (disks prepared in between).
	Total time.Duration
	// Transfer and Downtime are libvirt's, from the target's completed job statistics.
	Transfer, Downtime time.Duration
	Bytes              float64
	// Setup is, direct, the target's preparation: directory, disks, network namespace,
	// libvirtd started and connected.
	Setup time.Duration
	// Phases are, through Vireo, creation -> the first time the watch saw each phase.
	Phases map[v1.VirtualMachineInstanceMigrationPhase]time.Duration
	// CPU is where the machine's CPU went during the migration (Total's window).
	CPU startCPU
}

// migrationFigures summarize one route's migrations of one scenario.
type migrationFigures struct {
	Total    durations `json:"total"`
	Transfer durations `json:"transfer"`
	Downtime durations `json:"downtime"`
	DataMiB  numbers   `json:"dataTransferredMiB"`
	// Phases are creation -> each phase, as a watch saw them (Vireo's routes only).
	Phases map[v1.VirtualMachineInstanceMigrationPhase]durations `json:"phasesFromCreation,omitempty"`
	// CPU is the mean, over the migrations, of the CPU each role spent during one.
	CPU     startCPU `json:"meanCPU"`
	samples []migrationSample
}

func (f *migrationFigures) add(s migrationSample) { f.samples = append(f.samples, s) }

func (f *migrationFigures) summarize() {
	var total, transfer, down []time.Duration
	var data []float64
	phases := map[v1.VirtualMachineInstanceMigrationPhase][]time.Duration{}
	for _, s := range f.samples {
		total, transfer, down = append(total, s.Total), append(transfer, s.Transfer), append(down, s.Downtime)
		data = append(data, s.Bytes/hostproc.MiB)
		for p, d := range s.Phases {
			phases[p] = append(phases[p], d)
		}
	}
	f.Total, f.Transfer, f.Downtime, f.DataMiB = summarize(total), summarize(transfer), summarize(down), summarizeNumbers(data)
	f.CPU = meanCPU(f.samples)
	if len(phases) > 0 {
		f.Phases = map[v1.VirtualMachineInstanceMigrationPhase]durations{}
		for p, ds := range phases {
			f.Phases[p] = summarize(ds)
		}
	}
}

// meanCPU averages the samples' CPU windows, machine and roles.
func meanCPU(samples []migrationSample) startCPU {
	mean := startCPU{ByRole: map[string]float64{}}
	if len(samples) == 0 {
		return mean
	}
	n := float64(len(samples))
	for _, s := range samples {
		mean.Window += s.CPU.Window / n
		mean.HostBusy += s.CPU.HostBusy / n
		for role, sec := range s.CPU.ByRole {
			mean.ByRole[role] += sec / n
		}
	}
	return mean
}

// migrationResult is what the migration phase measured: figures by scenario, then route.
type migrationResult struct {
	GuestMemory string                                 `json:"guestMemory"`
	DirtyMiB    int                                    `json:"dirtyWorkingSetMiB"`
	Runs        int                                    `json:"migrationsPerRouteAndScenario"`
	Figures     map[string]map[string]migrationFigures `json:"figures"`
}

// migrationRecorder collects samples by scenario and route.
type migrationRecorder map[string]map[string]*migrationFigures

func (r migrationRecorder) add(scenario, route string, s migrationSample) {
	if r[scenario] == nil {
		r[scenario] = map[string]*migrationFigures{}
	}
	if r[scenario][route] == nil {
		r[scenario][route] = &migrationFigures{}
	}
	r[scenario][route].add(s)
}

// migrations runs the migration phase. Vireo's guest and the direct route's guest are both
// booted; in each run of each scenario the routes take turns (Vireo between nodes and in place,
// then direct; the other way round every other run), the guest of the route not migrating
// paused, so that drift in this machine's speed over the minutes of the phase lands on both
// routes alike.
func (e *env) migrations(ctx context.Context) (res migrationResult, err error) {
	res = migrationResult{GuestMemory: migrationGuestMemory, DirtyMiB: e.c.dirtyMiB, Runs: e.c.migrationRuns}
	t := &migrationTurns{e: e, rec: migrationRecorder{}}
	stored, err := e.bootMigrationGuest(ctx)
	defer func() {
		err = errors.Join(err, e.deleteAndWait(context.WithoutCancel(ctx), migrationVMI))
	}()
	if err != nil {
		return res, err
	}
	if t.scraper, err = newAgentScraper(ctx, e); err != nil {
		return res, err
	}
	image := e.c.containerDiskFile()
	// The direct route's guest boots while Vireo's is paused.
	if err := t.pauseVireo(ctx, true); err != nil {
		return res, err
	}
	t.floor, err = startMigrationFloor(ctx, e, stored, image)
	defer func() { err = errors.Join(err, t.floor.close()) }()
	if err != nil {
		return res, fmt.Errorf("direct migrations: %w", err)
	}
	for _, scenario := range []string{scenarioIdle, scenarioDirty} {
		for i := range e.c.migrationRuns {
			turns := []func(context.Context, string, int) error{t.vireo, t.direct}
			if i%2 == 1 {
				turns[0], turns[1] = turns[1], turns[0]
			}
			for _, turn := range turns {
				if err := turn(ctx, scenario, i); err != nil {
					return res, err
				}
			}
		}
	}
	// A paused guest would sit out its grace period when deleted.
	if err := t.pauseVireo(ctx, false); err != nil {
		return res, err
	}
	res.Figures = map[string]map[string]migrationFigures{}
	for scenario, routes := range t.rec {
		res.Figures[scenario] = map[string]migrationFigures{}
		for route, f := range routes {
			f.summarize()
			res.Figures[scenario][route] = *f
		}
	}
	return res, nil
}

// bootMigrationGuest creates the migrating VMI and returns it as the API stored it once it
// runs and its shell answers.
func (e *env) bootMigrationGuest(ctx context.Context) (*v1.VirtualMachineInstance, error) {
	vmi := e.template.DeepCopy()
	vmi.Name = migrationVMI
	vmi.Spec.Domain.Resources.Requests["memory"] = resource.MustParse(migrationGuestMemory)
	if _, err := e.cl.vireo.KubevirtV1().VirtualMachineInstances(benchNS).Create(ctx, vmi, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	say("migrations: waiting for VMI %s (%s) to run and its shell to answer", migrationVMI, migrationGuestMemory)
	stored, err := e.waitRunning(ctx, migrationVMI)
	if err != nil {
		return nil, err
	}
	agg, err := aggregatedRoute(e.cl.cfg, benchNS, migrationVMI)
	if err != nil {
		return nil, err
	}
	return stored, waitShell(ctx, agg, e.c.startTimeout)
}

// migrationTurns alternates the routes: one guest runs (and, in the dirtying scenario, dirties
// its memory) while the other is paused.
type migrationTurns struct {
	e       *env
	floor   *migFloor
	scraper *agentScraper
	rec     migrationRecorder
	// vireoPaused is the state of Vireo's guest; vireoDirty and floorDirty whether the
	// guests' dirtiers run.
	vireoPaused, vireoDirty, floorDirty bool
}

// vireo migrates Vireo's guest between the nodes and then in place.
func (t *migrationTurns) vireo(ctx context.Context, scenario string, run int) error {
	if err := t.floor.pause(ctx, true); err != nil {
		return err
	}
	if err := t.pauseVireo(ctx, false); err != nil {
		return err
	}
	if scenario == scenarioDirty && !t.vireoDirty {
		agg, err := aggregatedRoute(t.e.cl.cfg, benchNS, migrationVMI)
		if err == nil {
			err = startDirtierVia(ctx, agg, t.e.c.dirtyMiB)
		}
		if err != nil {
			return err
		}
		t.vireoDirty = true
	}
	for _, route := range []string{routeBetweenNodes, routeInPlace} {
		s, err := t.e.migrateOnce(ctx, t.scraper, route == routeInPlace)
		if err != nil {
			return fmt.Errorf("%s, %s, migration %d: %w", scenario, route, run+1, err)
		}
		say("migrations: %s, %s: %.2f s total, %.2f s transfer, %d ms downtime, %.0f MiB", scenario, route,
			s.Total.Seconds(), s.Transfer.Seconds(), s.Downtime.Milliseconds(), s.Bytes/hostproc.MiB)
		t.rec.add(scenario, route, s)
	}
	return nil
}

// direct migrates the direct route's guest to a fresh libvirtd.
func (t *migrationTurns) direct(ctx context.Context, scenario string, run int) error {
	if err := t.pauseVireo(ctx, true); err != nil {
		return err
	}
	if err := t.floor.pause(ctx, false); err != nil {
		return err
	}
	if scenario == scenarioDirty && !t.floorDirty {
		if err := t.floor.startDirtier(ctx, t.e.c.dirtyMiB); err != nil {
			return fmt.Errorf("direct migrations: %w", err)
		}
		t.floorDirty = true
	}
	s, err := t.floor.migrate(ctx)
	if err != nil {
		return fmt.Errorf("direct migrations: %s, migration %d: %w", scenario, run+1, err)
	}
	say("direct migrations: %s: %.2f s total (%.2f s to set the target up), %.2f s transfer, %d ms downtime, %.0f MiB", scenario,
		s.Total.Seconds(), s.Setup.Seconds(), s.Transfer.Seconds(), s.Downtime.Milliseconds(), s.Bytes/hostproc.MiB)
	t.rec.add(scenario, routeDirect, s)
	return nil
}

// pauseVireo pauses (or unpauses) Vireo's guest through its subresource, answered once the
// launcher acted, unless it already is.
func (t *migrationTurns) pauseVireo(ctx context.Context, pause bool) error {
	if t.vireoPaused == pause {
		return nil
	}
	action := map[bool]string{true: "pause", false: "unpause"}[pause]
	if err := t.e.put(ctx, "virtualmachineinstances", migrationVMI, action); err != nil {
		return fmt.Errorf("%s of VMI %s: %w", action, migrationVMI, err)
	}
	t.vireoPaused = pause
	return nil
}

// startDirtierVia starts the memory dirtier on the guest's console.
func startDirtierVia(ctx context.Context, r streamRoute, dirtyMiB int) error {
	s, err := r.dial(ctx, "console", nil)
	if err != nil {
		return err
	}
	defer s.Close()
	if _, err := s.Write([]byte(dirtierCommand(dirtyMiB))); err != nil {
		return err
	}
	if _, err := s.readUntil("DIRTY42", time.Now().Add(20*time.Second)); err != nil {
		return fmt.Errorf("starting the memory dirtier: %w", err)
	}
	return nil
}

// migrateOnce migrates the guest (to its own node when inPlace) and waits until it runs in
// the target alone; the figures come from the target node agent's arrival metrics.
func (e *env) migrateOnce(ctx context.Context, scraper *agentScraper, inPlace bool) (migrationSample, error) {
	var s migrationSample
	vmi, err := e.cl.vireo.KubevirtV1().VirtualMachineInstances(benchNS).Get(ctx, migrationVMI, metav1.GetOptions{})
	if err != nil {
		return s, err
	}
	before, err := scraper.scrape(ctx)
	if err != nil {
		return s, err
	}
	m := &v1.VirtualMachineInstanceMigration{ObjectMeta: metav1.ObjectMeta{GenerateName: migrationVMI + "-"},
		Spec: v1.VirtualMachineInstanceMigrationSpec{VMIName: migrationVMI}}
	if inPlace {
		m.Spec.AddedNodeSelector = map[string]string{"kubernetes.io/hostname": vmi.Status.NodeName}
	}
	migrations := e.cl.vireo.KubevirtV1().VirtualMachineInstanceMigrations(benchNS)
	cpu0, err := takeCPUSnapshot()
	if err != nil {
		return s, err
	}
	began := time.Now()
	created, err := migrations.Create(ctx, m, metav1.CreateOptions{})
	if err != nil {
		return s, err
	}
	done, phases, err := e.waitMigrationEnd(ctx, created, began)
	if err != nil {
		return s, err
	}
	s.Total, s.Phases = time.Since(began), phases
	if s.CPU, err = cpuSince(cpu0); err != nil {
		return s, err
	}
	ms := done.Status.MigrationState
	if done.Status.Phase != v1.MigrationSucceeded || ms == nil {
		return s, fmt.Errorf("migration %s ended %s: %+v", done.Name, done.Status.Phase, ms)
	}
	if (ms.TargetNode == ms.SourceNode) != inPlace {
		return s, fmt.Errorf("migration %s went from %s to %s (in place: %v)", done.Name, ms.SourceNode, ms.TargetNode, inPlace)
	}
	if err := e.waitMoved(ctx, ms.TargetNode); err != nil {
		return s, err
	}
	return s, arrivalFigures(ctx, scraper, before, ms.TargetNode, &s)
}

// waitMigrationEnd watches migration m until it succeeded or failed, and returns when (since
// began) it first saw each phase.
func (e *env) waitMigrationEnd(ctx context.Context, m *v1.VirtualMachineInstanceMigration, began time.Time) (*v1.VirtualMachineInstanceMigration,
	map[v1.VirtualMachineInstanceMigrationPhase]time.Duration, error) {
	phases := map[v1.VirtualMachineInstanceMigrationPhase]time.Duration{}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	w, err := e.cl.vireo.KubevirtV1().VirtualMachineInstanceMigrations(benchNS).Watch(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", m.Name).String(), ResourceVersion: m.ResourceVersion})
	if err != nil {
		return nil, nil, err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, nil, fmt.Errorf("migration %s did not end: %w", m.Name, ctx.Err())
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil, nil, fmt.Errorf("the watch of migration %s ended", m.Name)
			}
			got, isMigration := ev.Object.(*v1.VirtualMachineInstanceMigration)
			if ev.Type == watch.Error || !isMigration {
				return nil, nil, fmt.Errorf("watching migration %s: %v", m.Name, ev.Object)
			}
			// Phases one write passed at once count as seen then.
			for _, ts := range got.Status.PhaseTransitionTimestamps {
				if _, seen := phases[ts.Phase]; !seen {
					phases[ts.Phase] = time.Since(began)
				}
			}
			if got.Status.Phase == v1.MigrationSucceeded || got.Status.Phase == v1.MigrationFailed {
				return got, phases, nil
			}
		}
	}
}

// waitMoved waits until the VMI runs on node in one launcher Pod (the source Pod gone), so
// the next migration starts from a settled guest.
func (e *env) waitMoved(ctx context.Context, node string) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		vmi, err := e.cl.vireo.KubevirtV1().VirtualMachineInstances(benchNS).Get(ctx, migrationVMI, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		ms := vmi.Status.MigrationState
		return vmi.Status.Phase == v1.Running && vmi.Status.NodeName == node && len(vmi.Status.ActivePods) == 1 &&
			ms != nil && ms.TargetNodeDomainDetected, nil
	})
}

// arrivalFigures reads the migration's libvirt figures from the target node agent's metrics:
// exactly one arrival since before.
func arrivalFigures(ctx context.Context, scraper *agentScraper, before map[string]arrivals, node string, s *migrationSample) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		after, err := scraper.scrape(ctx)
		if err != nil {
			return false, err
		}
		a, b := after[node], before[node]
		switch n := a.Count - b.Count; {
		case n == 0:
			return false, nil
		case n != 1:
			return false, fmt.Errorf("%v migrations arrived on %s, want 1", n, node)
		}
		s.Downtime = time.Duration((a.DowntimeSum - b.DowntimeSum) * float64(time.Second))
		s.Transfer = time.Duration((a.TransferSum - b.TransferSum) * float64(time.Second))
		s.Bytes = a.ReceivedBytes - b.ReceivedBytes
		return true, nil
	})
}
