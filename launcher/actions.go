package launcher

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/vireo-dev/vireo/launcher/protocol"
	"github.com/vireo-dev/vireo/launcher/virt"
)

// Pause stops the guest's vCPUs (the VMI action pause).
func (l *launcher) Pause(ctx context.Context, _ *protocol.Empty) (*protocol.Empty, error) {
	name, state, err := l.actionState(ctx, "pause")
	if err != nil {
		return nil, err
	}
	switch state {
	case virt.StatePaused:
		return nil, status.Error(codes.FailedPrecondition, "VMI is already paused")
	case virt.StateRunning, virt.StateBlocked:
	default:
		return nil, notRunning("pause", state)
	}
	return &protocol.Empty{}, l.conn.Pause(ctx, name)
}

// Unpause runs a paused guest's vCPUs again (the VMI action unpause).
func (l *launcher) Unpause(ctx context.Context, _ *protocol.Empty) (*protocol.Empty, error) {
	name, state, err := l.actionState(ctx, "unpause")
	if err != nil {
		return nil, err
	}
	if state != virt.StatePaused {
		return nil, status.Errorf(codes.FailedPrecondition, "VMI is not paused (the guest is %s)", state)
	}
	return &protocol.Empty{}, l.conn.Resume(ctx, name)
}

// SoftReboot reboots the guest (the VMI action softreboot) through its guest agent when one is
// connected, as KubeVirt does, else through its ACPI power button: the guest shuts down
// cleanly and libvirt starts it again in the same QEMU.
func (l *launcher) SoftReboot(ctx context.Context, _ *protocol.Empty) (*protocol.Empty, error) {
	name, state, err := l.actionState(ctx, "soft-reboot")
	if err != nil {
		return nil, err
	}
	switch state {
	case virt.StatePaused:
		return nil, status.Error(codes.FailedPrecondition, "VMI is paused: unpause it first")
	case virt.StateRunning, virt.StateBlocked:
	default:
		return nil, notRunning("soft-reboot", state)
	}
	if l.hub.get().AgentConnected {
		return &protocol.Empty{}, l.conn.RebootByAgent(ctx, name)
	}
	return &protocol.Empty{}, l.conn.Reboot(ctx, name)
}

// Reset resets the machine like its reset button (the VMI action reset): the guest starts
// again at once in the same QEMU, with no shutdown and no guest agent needed; a paused guest
// is reset and stays paused.
func (l *launcher) Reset(ctx context.Context, _ *protocol.Empty) (*protocol.Empty, error) {
	name, state, err := l.actionState(ctx, "reset")
	if err != nil {
		return nil, err
	}
	switch state {
	case virt.StateRunning, virt.StateBlocked, virt.StatePaused:
	default:
		return nil, notRunning("reset", state)
	}
	return &protocol.Empty{}, l.conn.Reset(ctx, name)
}

// actionState is the domain's name and libvirt state, or the refusal of action when there is no
// domain to act on.
func (l *launcher) actionState(ctx context.Context, action string) (string, virt.State, error) {
	name := l.domainName()
	if name == "" {
		return "", virt.StateNoState, status.Errorf(codes.FailedPrecondition, "VMI is not running: cannot %s a guest that has not started yet", action)
	}
	state, _, err := l.conn.State(ctx, name)
	if errors.Is(err, virt.ErrNotFound) {
		return "", virt.StateNoState, status.Errorf(codes.FailedPrecondition, "VMI is not running: cannot %s a guest that has stopped", action)
	}
	if err != nil {
		return "", virt.StateNoState, fmt.Errorf("cannot %s: %w", action, err)
	}
	return name, state, nil
}

func notRunning(action string, state virt.State) error {
	return status.Errorf(codes.FailedPrecondition, "VMI is not running: cannot %s a guest that is %s", action, state)
}
