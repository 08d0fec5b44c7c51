package vm

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// Options of the VM actions, KubeVirt's bodies of PUT .../virtualmachines/NAME/{start,stop,restart}.
type (
	// StartOptions: paused starts the guest with its vCPUs stopped.
	StartOptions struct {
		Paused bool     `json:"paused,omitempty"`
		DryRun []string `json:"dryRun,omitempty"`
	}
	// StopOptions: gracePeriod overrides the VMI's terminationGracePeriodSeconds.
	StopOptions struct {
		GracePeriod *int64   `json:"gracePeriod,omitempty"`
		DryRun      []string `json:"dryRun,omitempty"`
	}
	// RestartOptions: gracePeriodSeconds 0 forces the restart.
	RestartOptions struct {
		GracePeriodSeconds *int64   `json:"gracePeriodSeconds,omitempty"`
		DryRun             []string `json:"dryRun,omitempty"`
	}
)

// Change is what an action does to a VM: a new run strategy (spec) and state change requests
// appended to its status. A nil Change field means no change there.
type Change struct {
	// RunStrategy replaces spec.runStrategy (or sets spec.running when the VM uses it).
	RunStrategy *v1.VirtualMachineRunStrategy
	// Requests are appended to status.stateChangeRequests.
	Requests []v1.VirtualMachineStateChangeRequest
	// VMIGracePeriod, when set, lowers the VMI's terminationGracePeriodSeconds before the rest
	// of the change is written (a forced stop or restart).
	VMIGracePeriod *int64
}

// Apply makes the change to vm: its spec (run strategy) and its status (requests).
func (c Change) Apply(vm *v1.VirtualMachine) {
	if rs := c.RunStrategy; rs != nil {
		if vm.Spec.RunStrategy == nil && vm.Spec.Running != nil {
			running := *rs != v1.RunStrategyHalted
			vm.Spec.Running = &running
		} else {
			vm.Spec.RunStrategy = rs
			vm.Spec.Running = nil
		}
	}
	vm.Status.StateChangeRequests = append(vm.Status.StateChangeRequests, c.Requests...)
}

// runStrategy is the VM's run strategy (spec.runStrategy, else spec.running).
func runStrategy(vm *v1.VirtualMachine) v1.VirtualMachineRunStrategy {
	if vm.Spec.RunStrategy != nil {
		return *vm.Spec.RunStrategy
	}
	if vm.Spec.Running != nil && *vm.Spec.Running {
		return v1.RunStrategyAlways
	}
	return v1.RunStrategyHalted
}

func running(vmi *v1.VirtualMachineInstance) bool {
	if vmi == nil || vmi.DeletionTimestamp != nil {
		return false
	}
	switch vmi.Status.Phase {
	case v1.Succeeded, v1.Failed:
		return false
	}
	return true
}

func conflict(vm *v1.VirtualMachine, action, format string, args ...any) error {
	return apierrors.NewConflict(v1.Resource("virtualmachines"), vm.Name, fmt.Errorf("%s: %s", action, fmt.Sprintf(format, args...)))
}

// Start is the start action on vm whose VMI is vmi (nil: none), with KubeVirt's rules per run
// strategy.
func Start(vm *v1.VirtualMachine, vmi *v1.VirtualMachineInstance, opts StartOptions) (Change, error) {
	start := v1.VirtualMachineStateChangeRequest{Action: v1.StartRequest}
	if opts.Paused {
		start.Data = map[string]string{v1.StartRequestDataPausedKey: v1.StartRequestDataPausedTrue}
	}
	rs := runStrategy(vm)
	switch rs {
	case v1.RunStrategyAlways, v1.RunStrategyOnce:
		return Change{}, conflict(vm, "start", "VM is already running (runStrategy %s starts it by itself)", rs)
	case v1.RunStrategyHalted:
		always := v1.RunStrategyAlways
		if opts.Paused {
			// The request says how to start; the new strategy keeps the VM running after.
			return Change{RunStrategy: &always, Requests: []v1.VirtualMachineStateChangeRequest{start}}, nil
		}
		return Change{RunStrategy: &always}, nil
	}
	if running(vmi) {
		return Change{}, conflict(vm, "start", "VM is already running")
	}
	if rs == v1.RunStrategyRerunOnFailure && vmi != nil && vmi.Status.Phase == v1.Failed {
		return Change{}, conflict(vm, "start", "the VM's last VMI failed and runStrategy RerunOnFailure is restarting it")
	}
	return Change{Requests: []v1.VirtualMachineStateChangeRequest{start}}, nil
}

// Stop is the stop action. With gracePeriod shorter than the VMI's terminationGracePeriodSeconds,
// the VMI's is lowered first (KubeVirt's forced stop): the guest gets that long after the ACPI
// power button before it is destroyed. A Halted VM whose VMI is still shutting down accepts only
// that.
func Stop(vm *v1.VirtualMachine, vmi *v1.VirtualMachineInstance, opts StopOptions) (Change, error) {
	if g := opts.GracePeriod; g != nil && *g < 0 {
		return Change{}, apierrors.NewBadRequest(fmt.Sprintf("stop: gracePeriod %d must not be negative", *g))
	}
	grace := shorterGrace(vmi, opts.GracePeriod)
	rs := runStrategy(vm)
	switch rs {
	case v1.RunStrategyHalted:
		if grace != nil && vmi.DeletionTimestamp != nil {
			return Change{VMIGracePeriod: grace}, nil
		}
		return Change{}, conflict(vm, "stop", "VM is not running (runStrategy Halted); only a forced stop with a shorter grace period can hurry a VMI that is shutting down")
	case v1.RunStrategyAlways, v1.RunStrategyOnce:
		halted := v1.RunStrategyHalted
		return Change{RunStrategy: &halted, VMIGracePeriod: grace}, nil
	}
	if !running(vmi) {
		return Change{}, conflict(vm, "stop", "VM is not running")
	}
	uid := vmi.UID
	return Change{Requests: []v1.VirtualMachineStateChangeRequest{{Action: v1.StopRequest, UID: &uid}}, VMIGracePeriod: grace}, nil
}

// shorterGrace is grace when it is shorter than the VMI's grace period (nil otherwise, or when
// there is no VMI): the one change of a running VMI's spec that can be honoured.
func shorterGrace(vmi *v1.VirtualMachineInstance, grace *int64) *int64 {
	if vmi == nil || grace == nil {
		return nil
	}
	current := v1.DefaultGracePeriodSeconds
	if g := vmi.Spec.TerminationGracePeriodSeconds; g != nil {
		current = *g
	}
	if *grace >= current {
		return nil
	}
	g := *grace
	return &g
}

// Restart is the restart action: stop the current VMI, then start a new one. gracePeriodSeconds
// 0 forces it: the VMI is destroyed at once instead of shut down.
func Restart(vm *v1.VirtualMachine, vmi *v1.VirtualMachineInstance, opts RestartOptions) (Change, error) {
	if g := opts.GracePeriodSeconds; g != nil && *g != 0 {
		return Change{}, apierrors.NewBadRequest(fmt.Sprintf("restart: gracePeriodSeconds %d: only 0 (a forced restart) may be given", *g))
	}
	switch rs := runStrategy(vm); rs {
	case v1.RunStrategyHalted, v1.RunStrategyOnce:
		return Change{}, conflict(vm, "restart", "runStrategy %s does not support manual restart requests", rs)
	}
	if !running(vmi) {
		return Change{}, conflict(vm, "restart", "VM is not running")
	}
	uid := vmi.UID
	return Change{Requests: []v1.VirtualMachineStateChangeRequest{{Action: v1.StopRequest, UID: &uid}, {Action: v1.StartRequest}},
		VMIGracePeriod: shorterGrace(vmi, opts.GracePeriodSeconds)}, nil
}
