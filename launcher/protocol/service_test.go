package protocol

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// fakeLauncher is a Server for testing the protocol itself.
type fakeLauncher struct {
	version uint32
	synced  chan *SyncRequest
	changes chan *DomainStatus
	actions []string
}

func (f *fakeLauncher) Hello(_ context.Context, req *HelloRequest) (*HelloResponse, error) {
	return &HelloResponse{Version: f.version, LauncherVersion: "test", VMIUID: "uid-1"}, nil
}

func (f *fakeLauncher) Sync(_ context.Context, req *SyncRequest) (*DomainStatus, error) {
	f.synced <- req
	return &DomainStatus{Phase: DomainRunning, Emulation: "tcg"}, nil
}

func (f *fakeLauncher) Shutdown(context.Context, *Empty) (*Empty, error) { return &Empty{}, nil }
func (f *fakeLauncher) Stop(context.Context, *Empty) (*Empty, error)     { return &Empty{}, nil }

func (f *fakeLauncher) Pause(context.Context, *Empty) (*Empty, error) {
	f.actions = append(f.actions, ActionPause)
	return nil, status.Error(codes.FailedPrecondition, "the guest is already paused")
}

func (f *fakeLauncher) Unpause(context.Context, *Empty) (*Empty, error) {
	f.actions = append(f.actions, ActionUnpause)
	return &Empty{}, nil
}

func (f *fakeLauncher) SoftReboot(context.Context, *Empty) (*Empty, error) {
	f.actions = append(f.actions, ActionSoftReboot)
	return &Empty{}, nil
}

func (f *fakeLauncher) Reset(context.Context, *Empty) (*Empty, error) {
	f.actions = append(f.actions, ActionReset)
	return &Empty{}, nil
}

func (f *fakeLauncher) GuestInfo(context.Context, *Empty) (*v1.VirtualMachineInstanceGuestAgentInfo, error) {
	return &v1.VirtualMachineInstanceGuestAgentInfo{Hostname: "guest"}, nil
}

func (f *fakeLauncher) Freeze(_ context.Context, req *FreezeRequest) (*Empty, error) {
	f.actions = append(f.actions, fmt.Sprintf("Freeze %s", req.UnfreezeTimeout))
	return &Empty{}, nil
}

func (f *fakeLauncher) Unfreeze(context.Context, *Empty) (*Empty, error) {
	f.actions = append(f.actions, ActionUnfreeze)
	return &Empty{}, nil
}

func (f *fakeLauncher) GuestProbe(context.Context, *GuestProbeRequest) (*Empty, error) {
	return &Empty{}, nil
}

func (f *fakeLauncher) PrepareTarget(context.Context, *SyncRequest) (*DomainStatus, error) {
	return &DomainStatus{}, nil
}
func (f *fakeLauncher) Migrate(context.Context, *MigrateRequest) (*Empty, error) {
	return &Empty{}, nil
}
func (f *fakeLauncher) AbortMigration(context.Context, *Empty) (*Empty, error) {
	return &Empty{}, nil
}

func (f *fakeLauncher) Events(_ *Empty, s EventSender) error {
	if err := s.Send(&DomainStatus{Phase: DomainNone}); err != nil {
		return err
	}
	for {
		select {
		case st := <-f.changes:
			if err := s.Send(st); err != nil {
				return err
			}
		case <-s.Context().Done():
			return nil
		}
	}
}

func serve(t *testing.T, f *fakeLauncher) func(context.Context) (net.Conn, error) {
	t.Helper()
	sock := filepath.Join(t.TempDir(), CommandSocket)
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(f)
	go srv.Serve(l)
	t.Cleanup(srv.Stop)
	return func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}
}

func TestProtocolRoundTrip(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f := &fakeLauncher{version: Version, synced: make(chan *SyncRequest, 1), changes: make(chan *DomainStatus)}
	c, err := Dial(ctx, serve(t, f))
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()
	if c.Launcher.VMIUID != "uid-1" {
		t.Errorf("handshake: %+v", c.Launcher)
	}
	vmi := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "vm", UID: "uid-1"}}
	st, err := c.Sync(ctx, &SyncRequest{VMI: vmi})
	if err != nil || st.Phase != DomainRunning || st.Emulation != "tcg" {
		t.Fatalf("Sync = %+v, %v", st, err)
	}
	got := <-f.synced
	if got.VMI.Name != "vm" || got.VMI.UID != "uid-1" {
		t.Errorf("launcher received %+v", got)
	}
	recv, err := c.Events(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if first, err := recv(); err != nil || first.Phase != DomainNone {
		t.Fatalf("first event = %+v, %v; want the current state at once", first, err)
	}
	f.changes <- &DomainStatus{Phase: DomainSucceeded, Reason: "GuestPoweredOff"}
	if next, err := recv(); err != nil || next.Phase != DomainSucceeded || !next.Phase.Ended() {
		t.Fatalf("next event = %+v, %v", next, err)
	}
	if err := c.Shutdown(ctx); err != nil {
		t.Error(err)
	}
	// A refusal keeps its code and message through gRPC: the node agent answers 409 with it.
	if err := c.Action(ctx, ActionPause); status.Code(err) != codes.FailedPrecondition || status.Convert(err).Message() != "the guest is already paused" {
		t.Errorf("Pause = %v, want FailedPrecondition with the launcher's message", err)
	}
	if err := c.Action(ctx, ActionUnpause); err != nil {
		t.Error(err)
	}
	if err := c.Action(ctx, ActionSoftReboot); err != nil {
		t.Error(err)
	}
	if err := c.Action(ctx, ActionReset); err != nil {
		t.Error(err)
	}
	if err := c.Freeze(ctx, 90*time.Second); err != nil {
		t.Error(err)
	}
	if err := c.Action(ctx, ActionUnfreeze); err != nil {
		t.Error(err)
	}
	if err := c.Action(ctx, "PowerCycle"); err == nil {
		t.Error("Action accepted an action the protocol does not have")
	}
	if strings.Join(f.actions, ",") != "Pause,Unpause,SoftReboot,Reset,Freeze 1m30s,Unfreeze" {
		t.Errorf("the launcher received %v", f.actions)
	}
	if err := c.Stop(ctx); err != nil {
		t.Error(err)
	}
}

func TestProtocolVersionMismatch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f := &fakeLauncher{version: Version + 1}
	if _, err := Dial(ctx, serve(t, f)); err == nil || !strings.Contains(err.Error(), "protocol version") {
		t.Fatalf("Dial with a launcher of another version = %v, want a version error", err)
	}
	if _, err := NegotiateVersion([]uint32{Version + 7}); err == nil {
		t.Error("NegotiateVersion accepted a peer without a common version")
	}
	if v, err := NegotiateVersion([]uint32{1, Version, Version + 1}); err != nil || v != Version {
		t.Errorf("NegotiateVersion = %d, %v; want the highest common, %d", v, err, Version)
	}
}
