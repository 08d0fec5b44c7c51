package launcher

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/vireo-dev/vireo/launcher/protocol"
)

// probeDialGrace is what reaching the launcher may add to a probe's own timeout.
const probeDialGrace = time.Second

// probeOutputLimit bounds how much of a failed exec probe's output its error quotes.
const probeOutputLimit = 256

// GuestProbe runs the VMI's exec or guestAgentPing probe through the guest agent: nil when the
// guest answered healthy within the request's timeout.
func (l *launcher) GuestProbe(ctx context.Context, req *protocol.GuestProbeRequest) (*protocol.Empty, error) {
	if req.Timeout <= 0 {
		return nil, status.Error(codes.InvalidArgument, "the probe's timeout must be positive")
	}
	if !req.Ping && len(req.Command) == 0 {
		return nil, status.Error(codes.InvalidArgument, "the probe has neither a ping nor a command")
	}
	name, _, err := l.actionState(ctx, "probe")
	if err != nil {
		return nil, err
	}
	if !l.hub.get().AgentConnected {
		return nil, status.Error(codes.FailedPrecondition, "VMI does not have guest agent connected: exec and guestAgentPing probes run through it")
	}
	ctx, cancel := context.WithTimeout(ctx, req.Timeout)
	defer cancel()
	if req.Ping {
		if err := l.conn.Ping(ctx, name, req.Timeout); err != nil {
			return nil, fmt.Errorf("the guest agent did not answer a ping: %w", err)
		}
		return &protocol.Empty{}, nil
	}
	res, err := l.conn.Exec(ctx, name, req.Command[0], req.Command[1:])
	if err != nil {
		return nil, fmt.Errorf("running %q in the guest: %w", req.Command[0], err)
	}
	if res.ExitCode != 0 {
		return nil, status.Errorf(codes.Unknown, "%q exited with code %d in the guest%s", req.Command[0], res.ExitCode, quoteOutput(res.Output))
	}
	return &protocol.Empty{}, nil
}

// quoteOutput is ": " and the start of a command's output, or nothing without output.
func quoteOutput(out string) string {
	out = strings.TrimSpace(out)
	if out == "" {
		return ""
	}
	if len(out) > probeOutputLimit {
		cut := probeOutputLimit
		for cut > 0 && !utf8.RuneStart(out[cut]) {
			cut--
		}
		out = out[:cut] + "..."
	}
	return ": " + out
}

// RunGuestProbe asks the launcher serving in dir to run a guest probe, for the kubelet's exec
// probe of the launcher container (vireo-launcher guest-probe): nil when the guest is healthy.
func RunGuestProbe(ctx context.Context, dir string, req *protocol.GuestProbeRequest) error {
	ctx, cancel := context.WithTimeout(ctx, req.Timeout+probeDialGrace)
	defer cancel()
	sock := filepath.Join(dir, protocol.CommandSocket)
	c, err := protocol.Dial(ctx, func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	})
	if err != nil {
		return fmt.Errorf("reaching the launcher at %s: %w", sock, err)
	}
	defer c.Close()
	if err := c.GuestProbe(ctx, req); err != nil {
		if s, ok := status.FromError(err); ok {
			return errors.New(s.Message())
		}
		return err
	}
	return nil
}
