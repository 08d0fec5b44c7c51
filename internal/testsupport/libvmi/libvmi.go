// Package libvmi builds VirtualMachineInstances for tests, in the style of KubeVirt's libvmi:
// New with options, each setting one thing. Without options the VMI is ns/vm with UID vmi-uid
// and no phase. It is for tests only.
package libvmi

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// Option sets one thing of a VMI.
type Option func(*v1.VirtualMachineInstance)

// New is a VMI ns/vm (UID vmi-uid) with opts applied in order.
func New(opts ...Option) *v1.VirtualMachineInstance {
	vmi := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "vm", Namespace: "ns", UID: "vmi-uid"}}
	for _, o := range opts {
		o(vmi)
	}
	return vmi
}

// WithName names the VMI.
func WithName(name string) Option { return func(v *v1.VirtualMachineInstance) { v.Name = name } }

// WithUID gives the VMI its UID.
func WithUID(uid types.UID) Option { return func(v *v1.VirtualMachineInstance) { v.UID = uid } }

// InPhase puts the VMI in phase.
func InPhase(phase v1.VirtualMachineInstancePhase) Option {
	return func(v *v1.VirtualMachineInstance) { v.Status.Phase = phase }
}

// Paused gives the VMI the condition Paused=True.
func Paused() Option {
	return func(v *v1.VirtualMachineInstance) {
		v.Status.Conditions = append(v.Status.Conditions, v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstancePaused, Status: v1.ConditionTrue})
	}
}

// HasRun records that the VMI was Running once (a phase transition to Running).
func HasRun() Option {
	return func(v *v1.VirtualMachineInstance) {
		v.Status.PhaseTransitionTimestamps = append(v.Status.PhaseTransitionTimestamps, v1.VirtualMachineInstancePhaseTransitionTimestamp{Phase: v1.Running})
	}
}
