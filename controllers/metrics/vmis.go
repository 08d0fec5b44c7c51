// Package metrics is vireo-controller's Prometheus metrics (served by internal/metricsserver):
// the histograms kubevirt_vmi_phase_transition_time_from_creation_seconds and
// kubevirt_vmi_migration_phase_transition_time_from_creation_seconds, and the VM, VMI and
// migration counts read from the controller's informers, among them
// kubevirt_vmi_number_of_outdated.
package metrics

import (
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	vireolisters "github.com/vireo-dev/vireo/generated/listers/core/v1"
)

// phaseTransition is KubeVirt's histogram of the time from a VMI's creation to each phase it
// reaches (its buckets, in seconds).
var phaseTransition = metrics.NewHistogramVec(&metrics.HistogramOpts{
	Name:           "kubevirt_vmi_phase_transition_time_from_creation_seconds",
	Help:           "Histogram of VM phase transitions duration from creation time in seconds.",
	Buckets:        []float64{0.5, 1, 2, 5, 10, 20, 30, 40, 50, 60, 90, 120, 180, 240, 300, 600, 1200, 1800, 3600},
	StabilityLevel: metrics.ALPHA,
}, []string{"phase"})

var (
	vmInfo = metrics.NewDesc("kubevirt_vm_info", "Information about VirtualMachines: one series per VM, status its printableStatus in lower case.",
		[]string{"name", "namespace", "status", "status_group"}, nil, metrics.ALPHA, "")
	numberOfVMs = metrics.NewDesc("kubevirt_number_of_vms", "The number of VirtualMachines per namespace.",
		[]string{"namespace"}, nil, metrics.ALPHA, "")
	vmStatusCount = metrics.NewDesc("kubevirt_vm_status_count", "The number of VirtualMachines per namespace and printableStatus (in lower case).",
		[]string{"namespace", "status", "status_group"}, nil, metrics.ALPHA, "")
	vmiPhaseCount = metrics.NewDesc("kubevirt_vmi_phase_count", "The number of VMIs per node and phase.",
		[]string{"node", "phase"}, nil, metrics.ALPHA, "")
	numberOfOutdated = metrics.NewDesc("kubevirt_vmi_number_of_outdated",
		"The number of VMIs running in a launcher other than the current one (labelled kubevirt.io/outdatedLauncherImage).",
		nil, nil, metrics.ALPHA, "")
)

var registerOnce sync.Once

// Register adds the VMI and VM metrics, read from the controller's listers at each scrape.
func Register(vms vireolisters.VirtualMachineLister, vmis vireolisters.VirtualMachineInstanceLister) {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(phaseTransition)
		legacyregistry.CustomMustRegister(&collector{vms: vms, vmis: vmis})
	})
}

// ObservePhaseTransition is a VMI informer's update handler: a VMI that reached a new phase adds
// the time from its creation to that phase to the histogram.
func ObservePhaseTransition(oldObj, newObj any) {
	old, ok1 := oldObj.(*v1.VirtualMachineInstance)
	vmi, ok2 := newObj.(*v1.VirtualMachineInstance)
	if !ok1 || !ok2 || old.Status.Phase == vmi.Status.Phase || vmi.Status.Phase == "" {
		return
	}
	ts := vmi.Status.PhaseTransitionTimestamps
	for i := len(ts) - 1; i >= 0; i-- {
		if ts[i].Phase == vmi.Status.Phase {
			d := ts[i].PhaseTransitionTimestamp.Sub(vmi.CreationTimestamp.Time)
			phaseTransition.WithLabelValues(string(vmi.Status.Phase)).Observe(max(d.Seconds(), 0))
			return
		}
	}
}

// collector reports the counts at scrape time.
type collector struct {
	metrics.BaseStableCollector
	vms  vireolisters.VirtualMachineLister
	vmis vireolisters.VirtualMachineInstanceLister
}

func (c *collector) DescribeWithStability(ch chan<- *metrics.Desc) {
	ch <- vmInfo
	ch <- numberOfVMs
	ch <- vmStatusCount
	ch <- vmiPhaseCount
	ch <- numberOfOutdated
}

func (c *collector) CollectWithStability(ch chan<- metrics.Metric) {
	if vms, err := c.vms.List(labels.Everything()); err == nil {
		type key struct{ namespace, status string }
		perNamespace, perStatus := map[string]int{}, map[key]int{}
		for _, vm := range vms {
			status := vm.Status.PrintableStatus
			if status == "" {
				status = v1.VirtualMachineStatusStopped
			}
			perNamespace[vm.Namespace]++
			perStatus[key{vm.Namespace, string(status)}]++
			ch <- metrics.NewLazyConstMetric(vmInfo, metrics.GaugeValue, 1, vm.Name, vm.Namespace, strings.ToLower(string(status)), statusGroup(status))
		}
		for ns, n := range perNamespace {
			ch <- metrics.NewLazyConstMetric(numberOfVMs, metrics.GaugeValue, float64(n), ns)
		}
		for k, n := range perStatus {
			status := v1.VirtualMachinePrintableStatus(k.status)
			ch <- metrics.NewLazyConstMetric(vmStatusCount, metrics.GaugeValue, float64(n), k.namespace, strings.ToLower(k.status), statusGroup(status))
		}
	}
	if vmis, err := c.vmis.List(labels.Everything()); err == nil {
		type key struct{ node, phase string }
		counts, outdated := map[key]int{}, 0
		for _, vmi := range vmis {
			counts[key{vmi.Status.NodeName, strings.ToLower(string(vmi.Status.Phase))}]++
			if _, ok := vmi.Labels[v1.OutdatedLauncherImageLabel]; ok {
				outdated++
			}
		}
		ch <- metrics.NewLazyConstMetric(numberOfOutdated, metrics.GaugeValue, float64(outdated))
		for k, n := range counts {
			ch <- metrics.NewLazyConstMetric(vmiPhaseCount, metrics.GaugeValue, float64(n), k.node, k.phase)
		}
	}
}

// statusGroup is KubeVirt's grouping of printable statuses: running, non_running, starting,
// migrating or error.
func statusGroup(s v1.VirtualMachinePrintableStatus) string {
	switch s {
	case v1.VirtualMachineStatusRunning:
		return "running"
	case v1.VirtualMachineStatusStopped, v1.VirtualMachineStatusPaused, v1.VirtualMachineStatusStopping, v1.VirtualMachineStatusTerminating:
		return "non_running"
	case v1.VirtualMachineStatusStarting, v1.VirtualMachineStatusProvisioning, v1.VirtualMachineStatusWaitingForVolumeBinding:
		return "starting"
	case v1.VirtualMachineStatusMigrating:
		return "migrating"
	}
	return "error"
}
