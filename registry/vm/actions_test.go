package vm

import (
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/testsupport/libvmi"
)

func vmWith(rs v1.VirtualMachineRunStrategy) *v1.VirtualMachine {
	return &v1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "vm"}, Spec: v1.VirtualMachineSpec{RunStrategy: &rs}}
}

func deleting(vmi *v1.VirtualMachineInstance) *v1.VirtualMachineInstance {
	now := metav1.Now()
	vmi.DeletionTimestamp = &now
	return vmi
}

func TestActions(t *testing.T) {
	type outcome string // "conflict", "bad request", or what changes
	cases := []struct {
		name   string
		action func() (Change, error)
		want   outcome
	}{
		{"start Halted", func() (Change, error) { return Start(vmWith(v1.RunStrategyHalted), nil, StartOptions{}) }, "runStrategy Always"},
		{"start Always", func() (Change, error) { return Start(vmWith(v1.RunStrategyAlways), nil, StartOptions{}) }, "conflict"},
		{"start Once", func() (Change, error) { return Start(vmWith(v1.RunStrategyOnce), nil, StartOptions{}) }, "conflict"},
		{"start Manual", func() (Change, error) { return Start(vmWith(v1.RunStrategyManual), nil, StartOptions{}) }, "Start"},
		{"start Manual running", func() (Change, error) {
			return Start(vmWith(v1.RunStrategyManual), libvmi.New(libvmi.WithUID("vmi-1"), libvmi.InPhase(v1.Running)), StartOptions{})
		}, "conflict"},
		{"start Manual after power-off", func() (Change, error) {
			return Start(vmWith(v1.RunStrategyManual), libvmi.New(libvmi.WithUID("vmi-1"), libvmi.InPhase(v1.Succeeded)), StartOptions{})
		}, "Start"},
		{"start RerunOnFailure stopped", func() (Change, error) {
			return Start(vmWith(v1.RunStrategyRerunOnFailure), libvmi.New(libvmi.WithUID("vmi-1"), libvmi.InPhase(v1.Succeeded)), StartOptions{})
		}, "Start"},
		{"start RerunOnFailure failed", func() (Change, error) {
			return Start(vmWith(v1.RunStrategyRerunOnFailure), libvmi.New(libvmi.WithUID("vmi-1"), libvmi.InPhase(v1.Failed)), StartOptions{})
		}, "conflict"},
		{"start Halted paused", func() (Change, error) { return Start(vmWith(v1.RunStrategyHalted), nil, StartOptions{Paused: true}) }, "runStrategy Always + Start paused"},
		{"start Manual paused", func() (Change, error) { return Start(vmWith(v1.RunStrategyManual), nil, StartOptions{Paused: true}) }, "Start paused"},
		{"stop Always", func() (Change, error) {
			return Stop(vmWith(v1.RunStrategyAlways), libvmi.New(libvmi.WithUID("vmi-1"), libvmi.InPhase(v1.Running)), StopOptions{})
		}, "runStrategy Halted"},
		{"stop Halted", func() (Change, error) { return Stop(vmWith(v1.RunStrategyHalted), nil, StopOptions{}) }, "conflict"},
		{"stop Manual", func() (Change, error) {
			return Stop(vmWith(v1.RunStrategyManual), libvmi.New(libvmi.WithUID("vmi-1"), libvmi.InPhase(v1.Running)), StopOptions{})
		}, "Stop vmi-1"},
		{"stop Manual stopped", func() (Change, error) { return Stop(vmWith(v1.RunStrategyManual), nil, StopOptions{}) }, "conflict"},
		{"stop negative grace", func() (Change, error) {
			return Stop(vmWith(v1.RunStrategyAlways), nil, StopOptions{GracePeriod: new(int64(-1))})
		}, "bad request"},
		{"stop with a grace period", func() (Change, error) {
			return Stop(vmWith(v1.RunStrategyAlways), libvmi.New(libvmi.WithUID("vmi-1"), libvmi.InPhase(v1.Running)), StopOptions{GracePeriod: new(int64(5))})
		}, "grace 5, runStrategy Halted"},
		{"stop with a longer grace period", func() (Change, error) {
			return Stop(vmWith(v1.RunStrategyAlways), libvmi.New(libvmi.WithUID("vmi-1"), libvmi.InPhase(v1.Running)), StopOptions{GracePeriod: new(int64(500))})
		}, "runStrategy Halted"},
		{"forced stop of a Manual VM", func() (Change, error) {
			return Stop(vmWith(v1.RunStrategyManual), libvmi.New(libvmi.WithUID("vmi-1"), libvmi.InPhase(v1.Running)), StopOptions{GracePeriod: new(int64(0))})
		}, "grace 0, Stop vmi-1"},
		{"forced stop hurries a Halted VM's VMI", func() (Change, error) {
			return Stop(vmWith(v1.RunStrategyHalted), deleting(libvmi.New(libvmi.WithUID("vmi-1"), libvmi.InPhase(v1.Running))), StopOptions{GracePeriod: new(int64(0))})
		}, "grace 0, "},
		{"stop of a Halted VM's VMI without a shorter grace", func() (Change, error) {
			return Stop(vmWith(v1.RunStrategyHalted), deleting(libvmi.New(libvmi.WithUID("vmi-1"), libvmi.InPhase(v1.Running))), StopOptions{})
		}, "conflict"},
		{"restart forced", func() (Change, error) {
			return Restart(vmWith(v1.RunStrategyAlways), libvmi.New(libvmi.WithUID("vmi-1"), libvmi.InPhase(v1.Running)), RestartOptions{GracePeriodSeconds: new(int64(0))})
		}, "grace 0, Stop vmi-1, Start"},
		{"restart Always", func() (Change, error) {
			return Restart(vmWith(v1.RunStrategyAlways), libvmi.New(libvmi.WithUID("vmi-1"), libvmi.InPhase(v1.Running)), RestartOptions{})
		}, "Stop vmi-1, Start"},
		{"restart Halted", func() (Change, error) { return Restart(vmWith(v1.RunStrategyHalted), nil, RestartOptions{}) }, "conflict"},
		{"restart Once", func() (Change, error) {
			return Restart(vmWith(v1.RunStrategyOnce), libvmi.New(libvmi.WithUID("vmi-1"), libvmi.InPhase(v1.Running)), RestartOptions{})
		}, "conflict"},
		{"restart not running", func() (Change, error) { return Restart(vmWith(v1.RunStrategyManual), nil, RestartOptions{}) }, "conflict"},
		{"restart grace 5", func() (Change, error) {
			return Restart(vmWith(v1.RunStrategyAlways), libvmi.New(libvmi.WithUID("vmi-1"), libvmi.InPhase(v1.Running)), RestartOptions{GracePeriodSeconds: new(int64(5))})
		}, "bad request"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			change, err := c.action()
			var got outcome
			switch {
			case apierrors.IsConflict(err):
				got = "conflict"
			case apierrors.IsBadRequest(err):
				got = "bad request"
			case err != nil:
				t.Fatalf("unexpected error %v", err)
			case change.RunStrategy != nil || change.VMIGracePeriod != nil:
				if g := change.VMIGracePeriod; g != nil {
					got = outcome(fmt.Sprintf("grace %d, ", *g))
				}
				if change.RunStrategy != nil {
					got += outcome("runStrategy " + string(*change.RunStrategy))
				}
				if len(change.Requests) > 0 && change.RunStrategy != nil {
					got += " + "
				}
				fallthrough
			default:
				for i, r := range change.Requests {
					if i > 0 {
						got += ", "
					}
					got += outcome(r.Action)
					if r.UID != nil {
						got += outcome(" " + string(*r.UID))
					}
					if r.Data[v1.StartRequestDataPausedKey] == v1.StartRequestDataPausedTrue {
						got += " paused"
					}
				}
			}
			if got != c.want {
				t.Errorf("got %q (%v), want %q", got, err, c.want)
			}
		})
	}
}

// TestApplyKeepsDeprecatedRunning: a VM written with spec.running keeps using it.
func TestApplyKeepsDeprecatedRunning(t *testing.T) {
	vm := &v1.VirtualMachine{Spec: v1.VirtualMachineSpec{Running: new(false)}}
	change, err := Start(vm, nil, StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	change.Apply(vm)
	if vm.Spec.RunStrategy != nil || vm.Spec.Running == nil || !*vm.Spec.Running {
		t.Errorf("spec after start: runStrategy %v running %v; want running: true", vm.Spec.RunStrategy, vm.Spec.Running)
	}
}
