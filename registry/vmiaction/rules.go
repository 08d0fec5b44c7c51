// Package vmiaction serves the VirtualMachineInstance actions pause, unpause, softreboot,
// reset, freeze and unfreeze (PUT .../virtualmachineinstances/NAME/ACTION, KubeVirt's bodies
// and answers):
// it checks the VMI's state with KubeVirt's rules (409 with KubeVirt's messages, 404 for no
// VMI), honours dryRun, and asks the node agent of the VMI's node over mutual TLS, which asks
// the VMI's launcher. The launcher decides whether the guest is paused (KubeVirt's 409s
// "VMI is already paused", "VMI is not paused", "VMI is paused" come from it). Authorization (update on the subresource)
// happened in the server's filters.
package vmiaction

import (
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// Actions are the subresource names.
const (
	Pause      = "pause"
	Unpause    = "unpause"
	SoftReboot = "softreboot"
	Reset      = "reset"
	Freeze     = "freeze"
	Unfreeze   = "unfreeze"
)

// Names lists the actions.
var Names = []string{Pause, Unpause, SoftReboot, Reset, Freeze, Unfreeze}

// DefaultUnfreezeTimeout is how long a freeze lasts unless its body says otherwise, after which
// the launcher thaws the guest's filesystems itself (KubeVirt's default).
const DefaultUnfreezeTimeout = 5 * time.Minute

// Options are the bodies of the actions: KubeVirt's PauseOptions and UnpauseOptions
// (softreboot and reset take none; an empty body is no options).
type Options struct {
	DryRun []string `json:"dryRun,omitempty"`
	// UnfreezeTimeout (freeze only, KubeVirt's FreezeUnfreezeTimeout) is when the launcher
	// thaws the filesystems if no unfreeze came first.
	UnfreezeTimeout *metav1.Duration `json:"unfreezeTimeout,omitempty"`
}

// Check applies KubeVirt's rules of action to vmi: nil when the action may go ahead, else a
// 409 whose message begins with KubeVirt's. Whether the guest is paused is checked here only
// for a dry run (from the VMI's Paused condition); a real request leaves it to the launcher,
// which knows at once: the condition lags behind the guest, and a pause followed at once by an
// unpause must not be refused because the status has not caught up.
func Check(action string, vmi *v1.VirtualMachineInstance, dryRun bool) error {
	if vmi.Status.Phase != v1.Running {
		return conflict(vmi, fmt.Sprintf("VMI is not running (phase %q)", vmi.Status.Phase))
	}
	if vmi.DeletionTimestamp != nil {
		return conflict(vmi, "VMI is not running: it is being deleted")
	}
	paused := dryRun && isPaused(vmi)
	switch action {
	case Pause:
		if paused {
			return conflict(vmi, "VMI is already paused")
		}
	case Unpause:
		if dryRun && !isPaused(vmi) {
			return conflict(vmi, "VMI is not paused")
		}
	case SoftReboot:
		if paused {
			return conflict(vmi, "VMI is paused: unpause it first")
		}
		if f := vmi.Spec.Domain.Features; f != nil && f.ACPI.Enabled != nil && !*f.ACPI.Enabled && !agentConnected(vmi) {
			return conflict(vmi, "VMI neither has the guest agent connected nor the ACPI feature enabled: "+
				"spec.domain.features.acpi.enabled is false, and no guest agent is connected to reboot it")
		}
	case Reset:
		// A hard reset needs neither the guest agent nor ACPI, and works on a paused guest.
	case Freeze, Unfreeze:
		if !agentConnected(vmi) {
			return conflict(vmi, "VMI does not have guest agent connected: filesystems are frozen through the guest agent")
		}
	default:
		return apierrors.NewNotFound(v1.Resource("virtualmachineinstances/"+action), vmi.Name)
	}
	return nil
}

// agentConnected reports whether the VMI's guest agent is connected (AgentConnected True).
func agentConnected(vmi *v1.VirtualMachineInstance) bool {
	for _, c := range vmi.Status.Conditions {
		if c.Type == v1.VirtualMachineInstanceAgentConnected {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

func isPaused(vmi *v1.VirtualMachineInstance) bool {
	for _, c := range vmi.Status.Conditions {
		if c.Type == v1.VirtualMachineInstancePaused {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

// conflict is KubeVirt's refusal: 409 on virtualmachineinstance.kubevirt.io NAME.
func conflict(vmi *v1.VirtualMachineInstance, msg string) error {
	return apierrors.NewConflict(v1.Resource("virtualmachineinstance"), vmi.Name, errors.New(msg))
}
