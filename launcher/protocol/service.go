package protocol

import (
	"context"
	"fmt"
	"net"
	"slices"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// ServiceName is the gRPC service the launcher serves.
const ServiceName = "vireo.launcher.v1.Launcher"

// Server is what a launcher implements.
type Server interface {
	Hello(context.Context, *HelloRequest) (*HelloResponse, error)
	Sync(context.Context, *SyncRequest) (*DomainStatus, error)
	Shutdown(context.Context, *Empty) (*Empty, error)
	Stop(context.Context, *Empty) (*Empty, error)
	// Pause, Unpause and SoftReboot carry out the VMI actions (version 3 on). A request the
	// domain's state does not allow (pausing a paused guest) fails with
	// codes.FailedPrecondition and a message for the user.
	Pause(context.Context, *Empty) (*Empty, error)
	Unpause(context.Context, *Empty) (*Empty, error)
	SoftReboot(context.Context, *Empty) (*Empty, error)
	// Reset resets the machine at once, like its reset button: no guest shutdown.
	Reset(context.Context, *Empty) (*Empty, error)
	// GuestInfo is what the guest agent says of the guest; FailedPrecondition without one.
	GuestInfo(context.Context, *Empty) (*v1.VirtualMachineInstanceGuestAgentInfo, error)
	// Freeze freezes the guest's filesystems through its agent until Unfreeze or the
	// request's timeout; FailedPrecondition without an agent.
	Freeze(context.Context, *FreezeRequest) (*Empty, error)
	Unfreeze(context.Context, *Empty) (*Empty, error)
	// GuestProbe runs an exec or guestAgentPing probe through the guest agent: Empty when the
	// guest is healthy, an error saying why not (FailedPrecondition without an agent).
	GuestProbe(context.Context, *GuestProbeRequest) (*Empty, error)
	// PrepareTarget, Migrate and AbortMigration carry out live migration (version 4 on; see
	// migration.go).
	PrepareTarget(context.Context, *SyncRequest) (*DomainStatus, error)
	Migrate(context.Context, *MigrateRequest) (*Empty, error)
	AbortMigration(context.Context, *Empty) (*Empty, error)
	// Events sends the current DomainStatus at once, then each change, until the stream's
	// context ends.
	Events(*Empty, EventSender) error
}

// EventSender is the server side of the Events stream.
type EventSender interface {
	Context() context.Context
	Send(*DomainStatus) error
}

// NewServer returns a gRPC server that serves impl with the protocol's codec.
func NewServer(impl Server, opts ...grpc.ServerOption) *grpc.Server {
	s := grpc.NewServer(append(opts, grpc.ForceServerCodecV2(codec{}))...)
	s.RegisterService(&serviceDesc, impl)
	return s
}

func unary[Req, Resp any](call func(Server, context.Context, *Req) (*Resp, error)) grpc.MethodHandler {
	return func(srv any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
		req := new(Req)
		if err := dec(req); err != nil {
			return nil, err
		}
		return call(srv.(Server), ctx, req)
	}
}

type eventSender struct{ grpc.ServerStream }

func (s eventSender) Send(st *DomainStatus) error { return s.SendMsg(st) }

var serviceDesc = grpc.ServiceDesc{
	ServiceName: ServiceName,
	HandlerType: (*Server)(nil),
	Methods: []grpc.MethodDesc{
		{MethodName: "Hello", Handler: unary(Server.Hello)},
		{MethodName: "Sync", Handler: unary(Server.Sync)},
		{MethodName: "Shutdown", Handler: unary(Server.Shutdown)},
		{MethodName: "Stop", Handler: unary(Server.Stop)},
		{MethodName: "Pause", Handler: unary(Server.Pause)},
		{MethodName: "Unpause", Handler: unary(Server.Unpause)},
		{MethodName: "SoftReboot", Handler: unary(Server.SoftReboot)},
		{MethodName: "Reset", Handler: unary(Server.Reset)},
		{MethodName: "GuestInfo", Handler: unary(Server.GuestInfo)},
		{MethodName: "Freeze", Handler: unary(Server.Freeze)},
		{MethodName: "Unfreeze", Handler: unary(Server.Unfreeze)},
		{MethodName: "GuestProbe", Handler: unary(Server.GuestProbe)},
		{MethodName: "PrepareTarget", Handler: unary(Server.PrepareTarget)},
		{MethodName: "Migrate", Handler: unary(Server.Migrate)},
		{MethodName: "AbortMigration", Handler: unary(Server.AbortMigration)},
	},
	Streams: []grpc.StreamDesc{{
		StreamName:    "Events",
		ServerStreams: true,
		Handler: func(srv any, stream grpc.ServerStream) error {
			req := new(Empty)
			if err := stream.RecvMsg(req); err != nil {
				return err
			}
			return srv.(Server).Events(req, eventSender{stream})
		},
	}},
}

// Client is the node agent's connection to one launcher, after a successful handshake.
type Client struct {
	conn *grpc.ClientConn
	// Launcher is the launcher's side of the handshake.
	Launcher HelloResponse
}

// Dial connects through dial (which opens the launcher's CommandSocket) and performs the
// handshake; it fails when the launcher shares no protocol version with this build.
func Dial(ctx context.Context, dial func(context.Context) (net.Conn, error)) (*Client, error) {
	conn, err := grpc.NewClient("passthrough:///launcher",
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return dial(ctx) }),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(codec{})))
	if err != nil {
		return nil, err
	}
	c := &Client{conn: conn}
	if err := c.conn.Invoke(ctx, method("Hello"), &HelloRequest{Versions: versions()}, &c.Launcher); err != nil {
		conn.Close()
		return nil, fmt.Errorf("launcher handshake: %w", err)
	}
	if !slices.Contains(versions(), c.Launcher.Version) {
		conn.Close()
		return nil, fmt.Errorf("launcher %s speaks protocol version %d, this node agent only %v", c.Launcher.LauncherVersion, c.Launcher.Version, versions())
	}
	return c, nil
}

// versions are the protocol versions this build speaks, lowest first.
func versions() []uint32 {
	var out []uint32
	for v := MinVersion; v <= Version; v++ {
		out = append(out, v)
	}
	return out
}

// NegotiateVersion is the launcher's half of the handshake: the highest version both speak.
func NegotiateVersion(theirs []uint32) (uint32, error) {
	best := uint32(0)
	for _, v := range theirs {
		if v >= MinVersion && v <= Version && v > best {
			best = v
		}
	}
	if best == 0 {
		return 0, fmt.Errorf("no common protocol version: the node agent speaks %v, this launcher %v", theirs, versions())
	}
	return best, nil
}

func method(name string) string { return "/" + ServiceName + "/" + name }

// Sync sends the VMI and returns the domain's status after the launcher acted on it.
func (c *Client) Sync(ctx context.Context, req *SyncRequest) (*DomainStatus, error) {
	st := new(DomainStatus)
	return st, c.conn.Invoke(ctx, method("Sync"), req, st)
}

// Action names the calls Action carries out.
const (
	ActionPause      = "Pause"
	ActionUnpause    = "Unpause"
	ActionSoftReboot = "SoftReboot"
	ActionReset      = "Reset"
	ActionUnfreeze   = "Unfreeze"
)

// Action carries out the VMI action name (ActionPause, ActionUnpause, ActionSoftReboot,
// ActionReset).
func (c *Client) Action(ctx context.Context, name string) error {
	switch name {
	case ActionPause, ActionUnpause, ActionSoftReboot, ActionReset, ActionUnfreeze:
	default:
		return fmt.Errorf("no launcher action %q", name)
	}
	return c.conn.Invoke(ctx, method(name), &Empty{}, &Empty{})
}

// Freeze asks the launcher to freeze the guest's filesystems, thawing them after timeout.
func (c *Client) Freeze(ctx context.Context, timeout time.Duration) error {
	return c.conn.Invoke(ctx, method("Freeze"), &FreezeRequest{UnfreezeTimeout: timeout}, &Empty{})
}

// GuestProbe asks the launcher to run a guest probe; nil means healthy.
func (c *Client) GuestProbe(ctx context.Context, req *GuestProbeRequest) error {
	return c.conn.Invoke(ctx, method("GuestProbe"), req, &Empty{})
}

// GuestInfo asks the launcher what the guest agent says of the guest.
func (c *Client) GuestInfo(ctx context.Context) (*v1.VirtualMachineInstanceGuestAgentInfo, error) {
	info := &v1.VirtualMachineInstanceGuestAgentInfo{}
	return info, c.conn.Invoke(ctx, method("GuestInfo"), &Empty{}, info)
}

// Shutdown asks the guest to power off (ACPI power button).
func (c *Client) Shutdown(ctx context.Context) error {
	return c.conn.Invoke(ctx, method("Shutdown"), &Empty{}, &Empty{})
}

// Stop destroys the domain at once.
func (c *Client) Stop(ctx context.Context) error {
	return c.conn.Invoke(ctx, method("Stop"), &Empty{}, &Empty{})
}

// Events opens the domain event stream; recv returns the next status, or an error when the
// stream ends (ctx canceled or the launcher gone).
func (c *Client) Events(ctx context.Context) (recv func() (*DomainStatus, error), err error) {
	stream, err := c.conn.NewStream(ctx, &serviceDesc.Streams[0], method("Events"))
	if err != nil {
		return nil, err
	}
	if err := stream.SendMsg(&Empty{}); err != nil {
		return nil, err
	}
	if err := stream.CloseSend(); err != nil {
		return nil, err
	}
	return func() (*DomainStatus, error) {
		st := new(DomainStatus)
		return st, stream.RecvMsg(st)
	}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }
