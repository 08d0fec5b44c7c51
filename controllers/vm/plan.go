package vm

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"maps"
	"math"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// Annotations the controller puts on the VMIs it creates.
const (
	// GenerationAnnotation is the VM's metadata.generation the VMI was created from (KubeVirt's).
	GenerationAnnotation = "kubevirt.io/vm-generation"
	// TemplateHashAnnotation identifies the VM template the VMI was created from, so a later
	// change of the template (and nothing else of the VM) shows as RestartRequired.
	TemplateHashAnnotation = "vireo.dev/vm-template-hash"
	// NameLabel on a VMI names the VM it belongs to (KubeVirt's).
	NameLabel = "vm.kubevirt.io/name"
)

// Crash-loop back-off: KubeVirt's min(300 s, 10 s * n^2), plus up to 10 % jitter.
const (
	backoffBase = 10 * time.Second
	backoffMax  = 300 * time.Second
)

// plan is what one sync does.
type plan struct {
	create bool // create a VMI from the template
	// paused: the VMI is created with startStrategy Paused (a Start request of start --paused).
	paused    bool
	deleteVMI bool // delete the current VMI
	// consumed is how many of the VM's stateChangeRequests this sync carries out.
	consumed int
	// requestStart queues a Start request, written before the failed VMI is deleted, so that
	// RerunOnFailure starts a new one once it is gone.
	requestStart bool
	// startFailure replaces the VM's (nil: clear it) when setFailure is true.
	setFailure   bool
	startFailure *v1.VirtualMachineStartFailure
	// requeue asks for another sync after this long (a back-off ending).
	requeue time.Duration
}

// RunStrategy is the VM's run strategy: spec.runStrategy, else the deprecated spec.running
// (true: Always, false or unset: Halted).
func RunStrategy(vm *v1.VirtualMachine) v1.VirtualMachineRunStrategy {
	if vm.Spec.RunStrategy != nil {
		return *vm.Spec.RunStrategy
	}
	if vm.Spec.Running != nil && *vm.Spec.Running {
		return v1.RunStrategyAlways
	}
	return v1.RunStrategyHalted
}

// decide computes the plan for vm whose VMI is vmi (nil when none exists).
func decide(vm *v1.VirtualMachine, vmi *v1.VirtualMachineInstance, now metav1.Time) plan {
	var p plan
	if vmi != nil && vmi.DeletionTimestamp != nil {
		return p // wait until it is gone; its deletion requeues the VM
	}
	if vm.DeletionTimestamp != nil {
		p.deleteVMI = vmi != nil
		return p
	}
	if vmi != nil && isFinal(vmi) {
		p.setFailure, p.startFailure = true, nextStartFailure(vm, vmi, now)
	} else if vmi != nil && vmi.Status.Phase == v1.Running && vm.Status.StartFailure != nil {
		p.setFailure = true // it ran: the crash loop is over
	}
	if reqs := vm.Status.StateChangeRequests; len(reqs) > 0 {
		p = p.request(reqs[0], vmi)
	} else {
		p = p.strategy(vm, vmi)
	}
	if p.create {
		failure := vm.Status.StartFailure
		if p.setFailure {
			failure = p.startFailure
		}
		if wait := backoffLeft(failure, now); wait > 0 {
			p.create, p.consumed, p.requeue = false, 0, wait
		}
	}
	return p
}

// strategy applies the VM's run strategy when no state change request is pending.
func (p plan) strategy(vm *v1.VirtualMachine, vmi *v1.VirtualMachineInstance) plan {
	// A VM whose strategy just became RerunOnFailure or Once (a new VM too) starts once;
	// after that only what the strategy says starts it again.
	switched := vm.Status.RunStrategy != RunStrategy(vm)
	switch RunStrategy(vm) {
	case v1.RunStrategyAlways:
		p.create = vmi == nil
		p.deleteVMI = vmi != nil && isFinal(vmi)
	case v1.RunStrategyRerunOnFailure:
		p.create = vmi == nil && switched
		if vmi != nil && vmi.Status.Phase == v1.Failed {
			p.deleteVMI, p.requestStart = true, true
		}
	case v1.RunStrategyHalted:
		p.deleteVMI = vmi != nil
	case v1.RunStrategyOnce:
		p.create = vmi == nil && switched
	case v1.RunStrategyManual:
	}
	return p
}

// request carries out the oldest state change request: Stop deletes the VMI it names (any
// VMI when it names none), Start creates one once no VMI (or only a finished one) is left.
func (p plan) request(req v1.VirtualMachineStateChangeRequest, vmi *v1.VirtualMachineInstance) plan {
	switch req.Action {
	case v1.StopRequest:
		if vmi != nil && (req.UID == nil || *req.UID == vmi.UID) {
			p.deleteVMI = true
			return p
		}
		p.consumed = 1 // nothing (left) to stop
	case v1.StartRequest:
		switch {
		case vmi == nil:
			p.create, p.consumed = true, 1
			p.paused = req.Data[v1.StartRequestDataPausedKey] == v1.StartRequestDataPausedTrue
		case isFinal(vmi):
			p.deleteVMI = true // make room; the next sync creates the new one
		default:
			p.consumed = 1 // already running
		}
	default:
		p.consumed = 1 // unknown actions are dropped
	}
	return p
}

// nextStartFailure counts a VMI that ended without ever running as one more failed start, once:
// a VMI already counted (a sync that sees it again before its deletion) changes nothing.
func nextStartFailure(vm *v1.VirtualMachine, vmi *v1.VirtualMachineInstance, now metav1.Time) *v1.VirtualMachineStartFailure {
	if vmi.Status.Phase != v1.Failed || everRan(vmi) {
		return nil
	}
	n := 1
	if f := vm.Status.StartFailure; f != nil {
		if f.LastFailedVMIUID == vmi.UID {
			return f.DeepCopy()
		}
		n = int(f.ConsecutiveFailCount) + 1
	}
	retry := metav1.NewTime(now.Add(backoffDelay(string(vm.UID), n)))
	return &v1.VirtualMachineStartFailure{ConsecutiveFailCount: int32(min(n, math.MaxInt32)), LastFailedVMIUID: vmi.UID, RetryAfterTimestamp: &retry}
}

// everRan reports whether the VMI reached Running.
func everRan(vmi *v1.VirtualMachineInstance) bool {
	for _, t := range vmi.Status.PhaseTransitionTimestamps {
		if t.Phase == v1.Running {
			return true
		}
	}
	return false
}

// backoffDelay is the wait before start n+1 after n failed starts.
func backoffDelay(seed string, n int) time.Duration {
	d := backoffBase * time.Duration(n*n)
	if d > backoffMax || n > 100 {
		d = backoffMax
	}
	sum := sha256.Sum256([]byte(seed + "/" + strconv.Itoa(n)))
	jitter := time.Duration(binary.BigEndian.Uint64(sum[:8]) % uint64(d/10+1))
	return d + jitter
}

// backoffLeft is how long the crash-loop back-off still holds off the next start.
func backoffLeft(f *v1.VirtualMachineStartFailure, now metav1.Time) time.Duration {
	if f == nil || f.RetryAfterTimestamp == nil {
		return 0
	}
	return f.RetryAfterTimestamp.Sub(now.Time)
}

// inBackoff reports whether the VM waits out a crash-loop back-off.
func inBackoff(vm *v1.VirtualMachine, now metav1.Time) bool {
	return backoffLeft(vm.Status.StartFailure, now) > 0
}

// newVMI is the VMI of vm: its template, named after the VM, owned by it; paused starts its
// guest paused.
func newVMI(vm *v1.VirtualMachine, paused bool) *v1.VirtualMachineInstance {
	vmi := &v1.VirtualMachineInstance{}
	if t := vm.Spec.Template; t != nil {
		vmi.Labels = maps.Clone(t.ObjectMeta.Labels)
		vmi.Annotations = maps.Clone(t.ObjectMeta.Annotations)
		vmi.Spec = *t.Spec.DeepCopy()
	}
	vmi.Name, vmi.Namespace = vm.Name, vm.Namespace
	if vmi.Labels == nil {
		vmi.Labels = map[string]string{}
	}
	vmi.Labels[NameLabel] = vm.Name
	if vmi.Annotations == nil {
		vmi.Annotations = map[string]string{}
	}
	vmi.Annotations[GenerationAnnotation] = strconv.FormatInt(vm.Generation, 10)
	vmi.Annotations[TemplateHashAnnotation] = templateHash(vm)
	vmi.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(vm, v1.SchemeGroupVersion.WithKind("VirtualMachine"))}
	if paused {
		s := v1.StartStrategyPaused
		vmi.Spec.StartStrategy = &s
	}
	return vmi
}

// templateHash identifies the VM's template.
func templateHash(vm *v1.VirtualMachine) string {
	data, _ := json.Marshal(vm.Spec.Template) // plain data: cannot fail
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// createdFromGeneration is the VM generation recorded on its VMI (0 when absent).
func createdFromGeneration(vmi *v1.VirtualMachineInstance) int64 {
	g, _ := strconv.ParseInt(vmi.Annotations[GenerationAnnotation], 10, 64)
	return g
}
