package metrics

import (
	"strconv"
	"strings"
	"testing"
	"time"

	promtestutil "github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	vireolisters "github.com/vireo-dev/vireo/generated/listers/core/v1"
)

func indexer(objs ...any) cache.Indexer {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, o := range objs {
		_ = idx.Add(o)
	}
	return idx
}

func vmIn(ns, name string, status v1.VirtualMachinePrintableStatus) *v1.VirtualMachine {
	return &v1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Status: v1.VirtualMachineStatus{PrintableStatus: status}}
}

func vmiOn(ns, name, node string, phase v1.VirtualMachineInstancePhase) *v1.VirtualMachineInstance {
	return &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Status: v1.VirtualMachineInstanceStatus{NodeName: node, Phase: phase}}
}

func outdated(vmi *v1.VirtualMachineInstance) *v1.VirtualMachineInstance {
	vmi.Labels = map[string]string{v1.OutdatedLauncherImageLabel: ""}
	return vmi
}

func TestCounts(t *testing.T) {
	c := &collector{
		vms: vireolisters.NewVirtualMachineLister(indexer(vmIn("a", "web", v1.VirtualMachineStatusRunning), vmIn("a", "db", v1.VirtualMachineStatusCrashLoopBackOff),
			vmIn("b", "new", ""))),
		vmis: vireolisters.NewVirtualMachineInstanceLister(indexer(vmiOn("a", "web", "n1", v1.Running), outdated(vmiOn("a", "x", "n1", v1.Running)), vmiOn("b", "y", "", v1.Pending))),
	}
	want := `
# HELP kubevirt_number_of_vms [ALPHA] The number of VirtualMachines per namespace.
# TYPE kubevirt_number_of_vms gauge
kubevirt_number_of_vms{namespace="a"} 2
kubevirt_number_of_vms{namespace="b"} 1
# HELP kubevirt_vm_info [ALPHA] Information about VirtualMachines: one series per VM, status its printableStatus in lower case.
# TYPE kubevirt_vm_info gauge
kubevirt_vm_info{name="db",namespace="a",status="crashloopbackoff",status_group="error"} 1
kubevirt_vm_info{name="new",namespace="b",status="stopped",status_group="non_running"} 1
kubevirt_vm_info{name="web",namespace="a",status="running",status_group="running"} 1
# HELP kubevirt_vm_status_count [ALPHA] The number of VirtualMachines per namespace and printableStatus (in lower case).
# TYPE kubevirt_vm_status_count gauge
kubevirt_vm_status_count{namespace="a",status="crashloopbackoff",status_group="error"} 1
kubevirt_vm_status_count{namespace="a",status="running",status_group="running"} 1
kubevirt_vm_status_count{namespace="b",status="stopped",status_group="non_running"} 1
# HELP kubevirt_vmi_number_of_outdated [ALPHA] The number of VMIs running in a launcher other than the current one (labelled kubevirt.io/outdatedLauncherImage).
# TYPE kubevirt_vmi_number_of_outdated gauge
kubevirt_vmi_number_of_outdated 1
# HELP kubevirt_vmi_phase_count [ALPHA] The number of VMIs per node and phase.
# TYPE kubevirt_vmi_phase_count gauge
kubevirt_vmi_phase_count{node="",phase="pending"} 1
kubevirt_vmi_phase_count{node="n1",phase="running"} 2
`
	// KubeVirt's kubevirt_vmi_phase_count breaks Prometheus's naming lint, which
	// component-base's comparisons apply: compare with client_golang's, which does not.
	reg := metrics.NewKubeRegistry()
	reg.CustomMustRegister(c)
	if err := promtestutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

func TestPhaseTransition(t *testing.T) {
	reg := metrics.NewKubeRegistry()
	reg.MustRegister(phaseTransition)
	phaseTransition.Reset() // the histogram is global: start afresh on each -count
	created := metav1.NewTime(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	vmi := func(phase v1.VirtualMachineInstancePhase, after time.Duration) *v1.VirtualMachineInstance {
		v := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: created}, Status: v1.VirtualMachineInstanceStatus{Phase: phase}}
		v.Status.PhaseTransitionTimestamps = []v1.VirtualMachineInstancePhaseTransitionTimestamp{{Phase: phase, PhaseTransitionTimestamp: metav1.NewTime(created.Add(after))}}
		return v
	}
	ObservePhaseTransition(vmi(v1.Scheduled, time.Second), vmi(v1.Running, 3*time.Second))
	ObservePhaseTransition(vmi(v1.Running, 3*time.Second), vmi(v1.Running, 3*time.Second)) // a resync: no transition
	ObservePhaseTransition(vmi(v1.Running, 3*time.Second), vmi(v1.Succeeded, 70*time.Second))
	want := `
# HELP kubevirt_vmi_phase_transition_time_from_creation_seconds [ALPHA] Histogram of VM phase transitions duration from creation time in seconds.
# TYPE kubevirt_vmi_phase_transition_time_from_creation_seconds histogram
`
	for _, p := range []struct {
		phase string
		at    float64
	}{{"Running", 3}, {"Succeeded", 70}} {
		for _, b := range []float64{0.5, 1, 2, 5, 10, 20, 30, 40, 50, 60, 90, 120, 180, 240, 300, 600, 1200, 1800, 3600} {
			n := 0
			if p.at <= b {
				n = 1
			}
			want += "kubevirt_vmi_phase_transition_time_from_creation_seconds_bucket{phase=\"" + p.phase + "\",le=\"" + trimFloat(b) + "\"} " + strconv.Itoa(n) + "\n"
		}
		want += "kubevirt_vmi_phase_transition_time_from_creation_seconds_bucket{phase=\"" + p.phase + "\",le=\"+Inf\"} 1\n"
		want += "kubevirt_vmi_phase_transition_time_from_creation_seconds_sum{phase=\"" + p.phase + "\"} " + trimFloat(p.at) + "\n"
		want += "kubevirt_vmi_phase_transition_time_from_creation_seconds_count{phase=\"" + p.phase + "\"} 1\n"
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "kubevirt_vmi_phase_transition_time_from_creation_seconds"); err != nil {
		t.Error(err)
	}
}

func trimFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
