package vm

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/testsupport/libvmi"
)

var now = metav1.NewTime(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))

type vmOpt func(*v1.VirtualMachine)

func newVM(strategy v1.VirtualMachineRunStrategy, opts ...vmOpt) *v1.VirtualMachine {
	vm := &v1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "vm", Namespace: "ns", UID: "vm-uid", Generation: 2},
		Spec: v1.VirtualMachineSpec{RunStrategy: &strategy, Template: &v1.VirtualMachineInstanceTemplateSpec{}}}
	vm.Status.RunStrategy = strategy // the controller has seen this strategy before
	for _, o := range opts {
		o(vm)
	}
	return vm
}

func fresh(vm *v1.VirtualMachine) { vm.Status.RunStrategy = "" }

func requests(r ...v1.VirtualMachineStateChangeRequest) vmOpt {
	return func(vm *v1.VirtualMachine) { vm.Status.StateChangeRequests = r }
}

func failedBefore(n int32, retry time.Duration) vmOpt {
	return func(vm *v1.VirtualMachine) {
		t := metav1.NewTime(now.Add(retry))
		vm.Status.StartFailure = &v1.VirtualMachineStartFailure{ConsecutiveFailCount: n, RetryAfterTimestamp: &t}
	}
}

func uid(s string) *types.UID { u := types.UID(s); return &u }

func TestDecide(t *testing.T) {
	start := v1.VirtualMachineStateChangeRequest{Action: v1.StartRequest}
	startPaused := v1.VirtualMachineStateChangeRequest{Action: v1.StartRequest, Data: map[string]string{v1.StartRequestDataPausedKey: v1.StartRequestDataPausedTrue}}
	stopThis := v1.VirtualMachineStateChangeRequest{Action: v1.StopRequest, UID: uid("vmi-uid")}
	stopOther := v1.VirtualMachineStateChangeRequest{Action: v1.StopRequest, UID: uid("older")}
	deleting := libvmi.New(libvmi.InPhase(v1.Running), libvmi.HasRun())
	deleting.DeletionTimestamp = &now
	cases := []struct {
		name string
		vm   *v1.VirtualMachine
		vmi  *v1.VirtualMachineInstance
		want plan
	}{
		{"Always creates", newVM(v1.RunStrategyAlways), nil, plan{create: true}},
		{"Always leaves a running VMI", newVM(v1.RunStrategyAlways), libvmi.New(libvmi.InPhase(v1.Running), libvmi.HasRun()), plan{}},
		{"Always replaces a guest that powered off", newVM(v1.RunStrategyAlways), libvmi.New(libvmi.InPhase(v1.Succeeded), libvmi.HasRun()), plan{deleteVMI: true, setFailure: true}},
		{"Always replaces a crashed guest", newVM(v1.RunStrategyAlways), libvmi.New(libvmi.InPhase(v1.Failed), libvmi.HasRun()), plan{deleteVMI: true, setFailure: true}},
		{"waits while the VMI is deleted", newVM(v1.RunStrategyAlways), deleting, plan{}},
		{"Halted deletes", newVM(v1.RunStrategyHalted), libvmi.New(libvmi.InPhase(v1.Running), libvmi.HasRun()), plan{deleteVMI: true}},
		{"Halted leaves nothing", newVM(v1.RunStrategyHalted), nil, plan{}},
		{"running: false is Halted", newVM(v1.RunStrategyHalted, func(vm *v1.VirtualMachine) { vm.Spec.RunStrategy, vm.Spec.Running = nil, new(false) }), libvmi.New(libvmi.InPhase(v1.Running), libvmi.HasRun()), plan{deleteVMI: true}},
		{"running: true is Always", newVM(v1.RunStrategyAlways, func(vm *v1.VirtualMachine) { vm.Spec.RunStrategy, vm.Spec.Running = nil, new(true) }), nil, plan{create: true}},
		{"RerunOnFailure starts a new VM", newVM(v1.RunStrategyRerunOnFailure, fresh), nil, plan{create: true}},
		{"RerunOnFailure stays stopped", newVM(v1.RunStrategyRerunOnFailure), nil, plan{}},
		{"RerunOnFailure keeps a powered-off VMI", newVM(v1.RunStrategyRerunOnFailure), libvmi.New(libvmi.InPhase(v1.Succeeded), libvmi.HasRun()), plan{setFailure: true}},
		{"RerunOnFailure reruns a failed VMI", newVM(v1.RunStrategyRerunOnFailure), libvmi.New(libvmi.InPhase(v1.Failed), libvmi.HasRun()), plan{deleteVMI: true, requestStart: true, setFailure: true}},
		{"Once runs a new VM", newVM(v1.RunStrategyOnce, fresh), nil, plan{create: true}},
		{"Once keeps the finished VMI", newVM(v1.RunStrategyOnce), libvmi.New(libvmi.InPhase(v1.Failed), libvmi.HasRun()), plan{setFailure: true}},
		{"Once does not run again", newVM(v1.RunStrategyOnce), nil, plan{}},
		{"Manual waits for a request", newVM(v1.RunStrategyManual, fresh), nil, plan{}},
		{"Start creates", newVM(v1.RunStrategyManual, requests(start)), nil, plan{create: true, consumed: 1}},
		{"Start paused creates paused", newVM(v1.RunStrategyAlways, requests(startPaused)), nil, plan{create: true, paused: true, consumed: 1}},
		{"Start makes room first", newVM(v1.RunStrategyManual, requests(start)), libvmi.New(libvmi.InPhase(v1.Succeeded), libvmi.HasRun()), plan{deleteVMI: true, setFailure: true}},
		{"Start of a running VM is done", newVM(v1.RunStrategyManual, requests(start)), libvmi.New(libvmi.InPhase(v1.Running), libvmi.HasRun()), plan{consumed: 1}},
		{"Stop deletes its VMI", newVM(v1.RunStrategyManual, requests(stopThis, start)), libvmi.New(libvmi.InPhase(v1.Running), libvmi.HasRun()), plan{deleteVMI: true}},
		{"Stop is done once its VMI is gone", newVM(v1.RunStrategyManual, requests(stopThis, start)), nil, plan{consumed: 1}},
		{"Stop of an older VMI spares the new one", newVM(v1.RunStrategyManual, requests(stopOther)), libvmi.New(libvmi.InPhase(v1.Running), libvmi.HasRun()), plan{consumed: 1}},
		{"deleting the VM deletes its VMI", newVM(v1.RunStrategyAlways, func(vm *v1.VirtualMachine) { vm.DeletionTimestamp = &now }), libvmi.New(libvmi.InPhase(v1.Running), libvmi.HasRun()), plan{deleteVMI: true}},
		{"back-off holds a start", newVM(v1.RunStrategyAlways, failedBefore(2, 30*time.Second)), nil, plan{requeue: 30 * time.Second}},
		{"back-off over", newVM(v1.RunStrategyAlways, failedBefore(2, -time.Second)), nil, plan{create: true}},
		{"back-off holds a Start request too", newVM(v1.RunStrategyManual, failedBefore(1, 5*time.Second), requests(start)), nil, plan{requeue: 5 * time.Second}},
		{"running again ends the crash loop", newVM(v1.RunStrategyAlways, failedBefore(3, -time.Second)), libvmi.New(libvmi.InPhase(v1.Running), libvmi.HasRun()), plan{setFailure: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := decide(c.vm, c.vmi, now)
			got.startFailure = nil // checked below
			if got != c.want {
				t.Errorf("decide = %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestCrashLoop: a VMI that fails before it runs counts one more failed start and delays the
// next by KubeVirt's min(300 s, 10 s * n^2) plus at most 10 % jitter.
func TestCrashLoop(t *testing.T) {
	for n, base := range map[int]time.Duration{1: 10 * time.Second, 2: 40 * time.Second, 5: 250 * time.Second, 6: 300 * time.Second, 1000: 300 * time.Second} {
		vm := newVM(v1.RunStrategyAlways)
		if n > 1 {
			failedBefore(int32(n-1), -time.Second)(vm)
		}
		p := decide(vm, libvmi.New(libvmi.InPhase(v1.Failed)), now)
		f := p.startFailure
		if !p.setFailure || f == nil || int(f.ConsecutiveFailCount) != n || f.RetryAfterTimestamp == nil {
			t.Fatalf("failure %d: plan %+v, start failure %+v", n, p, f)
		}
		if wait := f.RetryAfterTimestamp.Sub(now.Time); wait < base || wait > base+base/10 {
			t.Errorf("failure %d: retry after %s, want %s plus at most 10 %%", n, wait, base)
		}
		if !p.deleteVMI {
			t.Errorf("failure %d: the failed VMI is not replaced", n)
		}
	}
	// The same failed VMI seen again (a cache behind the deletion) is not counted twice.
	vm := newVM(v1.RunStrategyAlways)
	failed := libvmi.New(libvmi.InPhase(v1.Failed))
	first := decide(vm, failed, now).startFailure
	vm.Status.StartFailure = first
	if again := decide(vm, failed, now).startFailure; again == nil || again.ConsecutiveFailCount != 1 || !again.RetryAfterTimestamp.Equal(first.RetryAfterTimestamp) {
		t.Errorf("the failed VMI seen twice: %+v after %+v", again, first)
	}
	// A VMI that ran before it failed is no failed start.
	if p := decide(newVM(v1.RunStrategyAlways, failedBefore(3, -time.Second)), libvmi.New(libvmi.InPhase(v1.Failed), libvmi.HasRun()), now); !p.setFailure || p.startFailure != nil {
		t.Errorf("a VMI that ran: plan %+v, start failure %+v; want the failures cleared", p, p.startFailure)
	}
}

func TestNewVMI(t *testing.T) {
	vm := newVM(v1.RunStrategyAlways)
	vm.Spec.Template.ObjectMeta.Labels = map[string]string{"app": "web"}
	vm.Spec.Template.ObjectMeta.Annotations = map[string]string{"note": "kept"}
	vm.Spec.Template.Spec.Hostname = "web-1"
	if s := newVMI(vm, true).Spec.StartStrategy; s == nil || *s != v1.StartStrategyPaused {
		t.Errorf("a paused start: startStrategy %v, want Paused", s)
	}
	vmi := newVMI(vm, false)
	if s := vmi.Spec.StartStrategy; s != nil {
		t.Errorf("startStrategy %v of an ordinary start", *s)
	}
	if vmi.Name != "vm" || vmi.Namespace != "ns" || vmi.Spec.Hostname != "web-1" {
		t.Errorf("VMI %s/%s hostname %q", vmi.Namespace, vmi.Name, vmi.Spec.Hostname)
	}
	if vmi.Labels["app"] != "web" || vmi.Labels[NameLabel] != "vm" || vmi.Annotations["note"] != "kept" || vmi.Annotations[GenerationAnnotation] != "2" {
		t.Errorf("labels %v annotations %v", vmi.Labels, vmi.Annotations)
	}
	if ref := metav1.GetControllerOf(vmi); ref == nil || ref.UID != vm.UID || ref.Kind != "VirtualMachine" {
		t.Errorf("controller reference %+v", ref)
	}
	if vm.Spec.Template.ObjectMeta.Labels[NameLabel] != "" {
		t.Error("newVMI changed the VM's template")
	}
}
