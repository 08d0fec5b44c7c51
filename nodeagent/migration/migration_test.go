package migration

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"

	"github.com/vireo-dev/vireo/apis/core/defaults"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/reconcile"
	"github.com/vireo-dev/vireo/launcher/protocol"
	"github.com/vireo-dev/vireo/nodeagent/launchersession"
	"github.com/vireo-dev/vireo/nodeagent/nodedirs"
)

// TestRetryStartFailsAfterGrace: a migration whose start the source's agent recorded but
// could not begin (no proxy, a launcher refusing) is retried, then failed once it has not
// started for migrationStartGrace; the controller no longer times it by then.
func TestRetryStartFailsAfterGrace(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	now := t0
	a := NewManager(Config{Queue: reconcile.NewLoop("test", func(context.Context, string) error { return nil }),
		Now: func() metav1.Time { return metav1.NewTime(now) }})
	w := a.record("m1")
	ms := &v1.VirtualMachineInstanceMigrationState{MigrationUID: "m1", StartTimestamp: &metav1.Time{Time: t0}}
	cause := errors.New("the target launcher Pod does not run on this node")

	a.retryStart(t.Context(), "ns/vm", w, ms, cause)
	now = t0.Add(migrationStartGrace - time.Second)
	a.retryStart(t.Context(), "ns/vm", w, ms, cause)
	if ms.Failed || ms.EndTimestamp != nil {
		t.Fatalf("failed within the grace: %+v", ms)
	}
	now = t0.Add(migrationStartGrace)
	a.retryStart(t.Context(), "ns/vm", w, ms, cause)
	if !ms.Failed || ms.EndTimestamp == nil || !ms.EndTimestamp.Time.Equal(now) ||
		!strings.Contains(ms.FailureReason, "could not start") || !strings.Contains(ms.FailureReason, cause.Error()) {
		t.Errorf("after the grace: %+v", ms)
	}
}

// TestFailStartAbortRequested: an abort requested before a migration that never started
// ends succeeded.
func TestFailStartAbortRequested(t *testing.T) {
	a := NewManager(Config{})
	ms := &v1.VirtualMachineInstanceMigrationState{MigrationUID: "m1", AbortRequested: true}
	a.failStart(ms, errors.New("no launcher"))
	if !ms.Failed || ms.AbortStatus != v1.MigrationAbortSucceeded {
		t.Errorf("state %+v", ms)
	}
}

// TestReportArrival: the target's agent completes the migration once its launcher reports the
// guest arrived with the completed job's statistics, and not before; the source's agent keeps
// the proxy while its launcher has not reported the migration's end.
func TestReportArrival(t *testing.T) {
	end := time.Date(2026, 12, 1, 10, 0, 1, 0, time.UTC)
	vmi := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vm", UID: "vmi-uid"}}
	ctl := true
	launcherPod := func(name, node string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name + "-uid"),
			Labels:          map[string]string{v1.MigrationJobLabel: "m1"},
			OwnerReferences: []metav1.OwnerReference{{Kind: "VirtualMachineInstance", Name: "vm", UID: "vmi-uid", Controller: &ctl}}},
			Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	}
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	_ = idx.Add(launcherPod("target", "node-b"))
	_ = idx.Add(launcherPod("source", "node-b"))
	sessions := launchersession.NewRegistry(nodedirs.Dirs{}, func(string, *protocol.DomainStatus, *protocol.DomainStatus) {})
	defer sessions.StopAll()
	targetSession, sourceSession := sessions.Ensure("target-uid", "vmi-uid", "ns/vm"), sessions.Ensure("source-uid", "vmi-uid", "ns/vm")
	a := NewManager(Config{Node: "node-b", Pods: corelisters.NewPodLister(idx), Sessions: sessions})
	state := func() *v1.VirtualMachineInstanceMigrationState {
		return &v1.VirtualMachineInstanceMigrationState{MigrationUID: "m1", SourceNode: "node-b", SourcePod: "source",
			TargetNode: "node-b", TargetPod: "target", TargetNodeAddress: "node-b", AbortRequested: true}
	}
	cases := []struct {
		name      string
		migration *protocol.MigrationStatus
		phase     protocol.DomainPhase
		completed bool
	}{
		{"waiting", &protocol.MigrationStatus{Phase: protocol.MigrationReady}, protocol.DomainNone, false},
		{"arrived, statistics not read", &protocol.MigrationStatus{Phase: protocol.MigrationCompleted, End: &end}, protocol.DomainRunning, false},
		{"arrived but the guest ended", &protocol.MigrationStatus{Phase: protocol.MigrationCompleted, End: &end, ElapsedMs: 900}, protocol.DomainFailed, false},
		{"arrived", &protocol.MigrationStatus{Phase: protocol.MigrationCompleted, End: &end, ElapsedMs: 900}, protocol.DomainRunning, true},
	}
	for _, c := range cases {
		targetSession.Record(&protocol.DomainStatus{Phase: c.phase, Migration: c.migration})
		ms := state()
		a.reportArrival(vmi, ms)
		if ms.Completed != c.completed || ms.TargetNodeDomainDetected != c.completed {
			t.Errorf("%s: completed %v, detected %v, want %v", c.name, ms.Completed, ms.TargetNodeDomainDetected, c.completed)
		}
		if c.completed && (ms.EndTimestamp == nil || !ms.EndTimestamp.Time.Equal(end) || ms.AbortStatus != v1.MigrationAbortFailed) {
			t.Errorf("%s: end %v, abort status %q", c.name, ms.EndTimestamp, ms.AbortStatus)
		}
	}

	ms := state()
	ms.Completed = true
	sourceSession.Record(&protocol.DomainStatus{Phase: protocol.DomainRunning, Migration: &protocol.MigrationStatus{UID: "m1", Phase: protocol.MigrationRunning}})
	if !a.stillLeaving(vmi, ms) {
		t.Error("the source launcher still migrating: not leaving")
	}
	sourceSession.Record(&protocol.DomainStatus{Phase: protocol.DomainRunning, Migration: &protocol.MigrationStatus{UID: "m1", Phase: protocol.MigrationCompleted}})
	if a.stillLeaving(vmi, ms) {
		t.Error("the source launcher reported the end: still leaving")
	}
}

// TestStartJustWritten: the source's agent starts a migration right after its write recorded
// the start, and only then: not for another node's, an aborted, an ended or an already started
// migration, nor one whose target is not ready.
func TestStartJustWritten(t *testing.T) {
	now := metav1.Now()
	state := func(mod func(*v1.VirtualMachineInstanceMigrationState)) *v1.VirtualMachineInstanceMigrationState {
		ms := &v1.VirtualMachineInstanceMigrationState{MigrationUID: "m1", SourceNode: "node-a", TargetNode: "node-b", TargetNodeAddress: "10.0.0.2:8186"}
		if mod != nil {
			mod(ms)
		}
		return ms
	}
	started := func(ms *v1.VirtualMachineInstanceMigrationState) { ms.StartTimestamp = &now }
	cases := []struct {
		name          string
		before, after *v1.VirtualMachineInstanceMigrationState
		want          bool
	}{
		{"start recorded by this write", state(nil), state(started), true},
		{"already started before", state(started), state(started), false},
		{"not started", state(nil), state(nil), false},
		{"another node's migration", state(nil), state(func(ms *v1.VirtualMachineInstanceMigrationState) { started(ms); ms.SourceNode = "node-c" }), false},
		{"abort requested", state(nil), state(func(ms *v1.VirtualMachineInstanceMigrationState) { started(ms); ms.AbortRequested = true }), false},
		{"failed", state(nil), state(func(ms *v1.VirtualMachineInstanceMigrationState) { started(ms); ms.Failed = true }), false},
		{"target not ready", state(nil), state(func(ms *v1.VirtualMachineInstanceMigrationState) { started(ms); ms.TargetNodeAddress = "" }), false},
		{"another migration before", state(func(ms *v1.VirtualMachineInstanceMigrationState) { ms.MigrationUID = "m0" }), state(started), false},
		{"no state before", nil, state(started), false},
	}
	for _, c := range cases {
		if got := startJustWritten(c.before, c.after, "node-a"); got != c.want {
			t.Errorf("%s: startJustWritten = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestMigrationProgressSeriesEndWithTheMigration: the source agent's progress series of a
// migration go when the agent forgets the migration, as when the source launcher Pod is gone
// after a success the target's agent reported first (the source's launcher never reports the
// end to it then).
func TestMigrationProgressSeriesEndWithTheMigration(t *testing.T) {
	RegisterMetrics()
	a := NewManager(Config{Node: "node1"})
	vmi := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "progress-vm"}}
	a.observeMigration("m1", vmi, &protocol.MigrationStatus{UID: "m1", Phase: protocol.MigrationRunning, DataProcessed: 42, DataRemaining: 7})
	if n := progressSeries(t, "progress-vm"); n != len(migrationGauges) {
		t.Fatalf("%d progress series while the migration runs, want %d", n, len(migrationGauges))
	}
	a.record("m1").proxyPod = "source-pod"
	a.EndFrom("source-pod")
	if n := progressSeries(t, "progress-vm"); n != 0 {
		t.Errorf("%d progress series after the source Pod went, want 0", n)
	}
}

// progressSeries counts the kubevirt_vmi_migration_* series of VMI name in the registry /metrics
// serves.
func progressSeries(t *testing.T, name string) int {
	t.Helper()
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range families {
		if !strings.HasPrefix(f.GetName(), "kubevirt_vmi_migration_") {
			continue
		}
		for _, m := range f.GetMetric() {
			if testutil.LabelsMatch(m, map[string]string{"name": name}) {
				n++
			}
		}
	}
	return n
}

// TestSecondsDurationSaturates: a timeout beyond time.Duration's range stays the longest one,
// not a negative duration that would turn the limit off.
func TestSecondsDurationSaturates(t *testing.T) {
	for s, want := range map[int64]time.Duration{0: 0, 150: 150 * time.Second, 1 << 40: math.MaxInt64, math.MaxInt64: math.MaxInt64} {
		if got := secondsDuration(s); got != want {
			t.Errorf("secondsDuration(%d) = %v, want %v", s, got, want)
		}
	}
}

// TestMigrationSettingsReachTheLauncher: the cluster's settings become the launcher's request
// and the configuration the migration reports; a target that refused post-copy shows as
// allowPostCopy false.
func TestMigrationSettingsReachTheLauncher(t *testing.T) {
	m := &defaults.MigrationSettings{ParallelMigrationsPerCluster: 5, ParallelOutboundMigrationsPerNode: 2,
		BandwidthPerMigration: resource.MustParse("64Mi"), CompletionTimeoutPerGiB: 150, ProgressTimeout: 150,
		AllowAutoConverge: true, AllowPostCopy: true}
	ms := &v1.VirtualMachineInstanceMigrationState{MigrationUID: "m1"}
	want := &protocol.MigrateRequest{MigrationUID: "m1", BandwidthMiB: 64, ProgressTimeout: 150 * time.Second,
		CompletionTimeoutPerGiB: 150 * time.Second, AllowAutoConverge: true, AllowPostCopy: true}
	if got := migrateRequest(ms, m); *got != *want {
		t.Errorf("request %+v, want %+v", got, want)
	}
	if got := migrateRequest(ms, nil); *got != (protocol.MigrateRequest{MigrationUID: "m1"}) {
		t.Errorf("request without settings %+v", got)
	}
	c := configurationOf(m)
	if *c.ParallelMigrationsPerCluster != 5 || *c.ParallelOutboundMigrationsPerNode != 2 || c.BandwidthPerMigration.String() != "64Mi" ||
		*c.CompletionTimeoutPerGiB != 150 || *c.ProgressTimeout != 150 || !*c.AllowAutoConverge || !*c.AllowPostCopy || !*c.AllowWorkloadDisruption {
		t.Errorf("configuration %+v", c)
	}
	// A policy that allows post-copy but forbids disrupting the guest: no post-copy.
	noDisruption := *m
	noDisruption.AllowWorkloadDisruption = new(false)
	if got := migrateRequest(ms, &noDisruption); got.AllowPostCopy {
		t.Errorf("post-copy requested without workload disruption allowed: %+v", got)
	}
	a := NewManager(Config{})
	dom := &protocol.DomainStatus{Migration: &protocol.MigrationStatus{UID: "m1", Phase: protocol.MigrationRunning,
		PostCopyUnavailable: "Postcopy is not supported"}}
	// The state written with the start lacks the configuration; the agent's record has it.
	ms.MigrationConfiguration = nil
	a.record("m1").configuration = configurationOf(m)
	a.reportSource(t.Context(), nil, dom, ms)
	if c := ms.MigrationConfiguration; c == nil || *c.AllowPostCopy || !*c.AllowAutoConverge {
		t.Errorf("after the target refused post-copy: configuration %+v, want allowPostCopy false", c)
	}
	if !*a.record("m1").configuration.AllowPostCopy {
		t.Error("the agent's record of the configuration changed with the state's")
	}
}
