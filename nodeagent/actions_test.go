package nodeagent

import (
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/util/wait"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/nodeagentapi"
	"github.com/vireo-dev/vireo/launcher/protocol"
	"github.com/vireo-dev/vireo/nodeagent/nodedirs/nodedirstest"
)

// actionLauncher serves the launcher protocol: it keeps the actions it received and refuses a
// second pause the way a launcher does.
type actionLauncher struct {
	mu     sync.Mutex
	calls  []string
	paused bool
}

func (l *actionLauncher) Hello(context.Context, *protocol.HelloRequest) (*protocol.HelloResponse, error) {
	return &protocol.HelloResponse{Version: protocol.Version, LauncherVersion: "test", VMIUID: "vmi-uid"}, nil
}
func (l *actionLauncher) Sync(context.Context, *protocol.SyncRequest) (*protocol.DomainStatus, error) {
	return &protocol.DomainStatus{Phase: protocol.DomainRunning}, nil
}
func (l *actionLauncher) Shutdown(context.Context, *protocol.Empty) (*protocol.Empty, error) {
	return &protocol.Empty{}, nil
}
func (l *actionLauncher) Stop(context.Context, *protocol.Empty) (*protocol.Empty, error) {
	return &protocol.Empty{}, nil
}
func (l *actionLauncher) Pause(context.Context, *protocol.Empty) (*protocol.Empty, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, "Pause")
	if l.paused {
		return nil, status.Error(codes.FailedPrecondition, "the guest is already paused")
	}
	l.paused = true
	return &protocol.Empty{}, nil
}
func (l *actionLauncher) Unpause(context.Context, *protocol.Empty) (*protocol.Empty, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, "Unpause")
	l.paused = false
	return &protocol.Empty{}, nil
}
func (l *actionLauncher) SoftReboot(context.Context, *protocol.Empty) (*protocol.Empty, error) {
	return nil, status.Error(codes.Internal, "libvirt went away")
}
func (l *actionLauncher) Reset(context.Context, *protocol.Empty) (*protocol.Empty, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, "Reset")
	return &protocol.Empty{}, nil
}
func (l *actionLauncher) GuestInfo(context.Context, *protocol.Empty) (*v1.VirtualMachineInstanceGuestAgentInfo, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.paused {
		return nil, status.Error(codes.FailedPrecondition, "VMI does not have guest agent connected")
	}
	return &v1.VirtualMachineInstanceGuestAgentInfo{Hostname: "tiny", OS: v1.VirtualMachineInstanceGuestOSInfo{ID: "vireo-tiny"}}, nil
}
func (l *actionLauncher) Freeze(_ context.Context, req *protocol.FreezeRequest) (*protocol.Empty, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, "Freeze "+req.UnfreezeTimeout.String())
	return &protocol.Empty{}, nil
}
func (l *actionLauncher) Unfreeze(context.Context, *protocol.Empty) (*protocol.Empty, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, "Unfreeze")
	return &protocol.Empty{}, nil
}
func (l *actionLauncher) GuestProbe(context.Context, *protocol.GuestProbeRequest) (*protocol.Empty, error) {
	return nil, status.Error(codes.Unimplemented, "not in this test")
}
func (l *actionLauncher) PrepareTarget(context.Context, *protocol.SyncRequest) (*protocol.DomainStatus, error) {
	return nil, status.Error(codes.Unimplemented, "not in this test")
}
func (l *actionLauncher) Migrate(context.Context, *protocol.MigrateRequest) (*protocol.Empty, error) {
	return nil, status.Error(codes.Unimplemented, "not in this test")
}
func (l *actionLauncher) AbortMigration(context.Context, *protocol.Empty) (*protocol.Empty, error) {
	return nil, status.Error(codes.Unimplemented, "not in this test")
}
func (l *actionLauncher) Events(_ *protocol.Empty, s protocol.EventSender) error {
	if err := s.Send(&protocol.DomainStatus{Phase: protocol.DomainRunning}); err != nil {
		return err
	}
	<-s.Context().Done()
	return nil
}

// TestActionsReachTheLauncher: PUT .../pause on the node agent reaches the launcher of the VMI
// through the agent's session; the launcher's refusal is a 409 with its message, its failure a
// 500 naming the VMI; an unknown VMI is a 404, a replaced one (another UID) a 409.
func TestActionsReachTheLauncher(t *testing.T) {
	f := newStreamFixture(t, false, time.Minute)
	mux := http.NewServeMux()
	f.agent.registerActions(mux)
	f.srv.Config.Handler = mux
	podUID := streamPodUID
	fake := &actionLauncher{}
	l, err := net.Listen("unix", filepath.Join(nodedirstest.EmptyDir(t, f.agent.dirs, podUID), protocol.CommandSocket))
	if err != nil {
		t.Fatal(err)
	}
	srv := protocol.NewServer(fake)
	go srv.Serve(l)
	t.Cleanup(srv.Stop)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	f.agent.sessions.Ensure(podUID, "vmi-uid", "ns/vm1")

	put := func(path string) (int, string) {
		req, _ := http.NewRequest(http.MethodPut, f.srv.URL+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, strings.TrimSpace(string(b))
	}
	path := func(name, action string) string { return nodeagentapi.VMIPath("ns", name, action) }
	get := func(path string) (int, string) {
		resp, err := http.Get(f.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, strings.TrimSpace(string(b))
	}
	// The session connects in the background: until then the answer is 503.
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		code, _ := put(path("vm1", "pause") + "?uid=vmi-uid")
		return code == http.StatusOK, nil
	}); err != nil {
		t.Fatal("pause never reached the launcher")
	}
	if code, msg := put(path("vm1", "pause") + "?uid=vmi-uid"); code != http.StatusConflict || msg != "the guest is already paused" {
		t.Errorf("second pause: %d %q, want 409 with the launcher's message", code, msg)
	}
	// The fake launcher has no agent while paused.
	if code, msg := get(path("vm1", nodeagentapi.GuestInfo) + "?uid=vmi-uid"); code != http.StatusConflict || msg != "VMI does not have guest agent connected" {
		t.Errorf("guest info without an agent: %d %q, want 409 with the launcher's message", code, msg)
	}
	if code, msg := put(path("vm1", "unpause")); code != http.StatusOK {
		t.Errorf("unpause: %d %q", code, msg)
	}
	if code, msg := get(path("vm1", nodeagentapi.GuestInfo) + "?uid=vmi-uid"); code != http.StatusOK || !strings.Contains(msg, `"hostname":"tiny"`) || !strings.Contains(msg, `"id":"vireo-tiny"`) {
		t.Errorf("guest info: %d %q, want 200 with the launcher's answer", code, msg)
	}
	if code, msg := put(path("vm1", "softreboot")); code != http.StatusInternalServerError || !strings.Contains(msg, "VMI ns/vm1") || !strings.Contains(msg, "libvirt went away") {
		t.Errorf("failing softreboot: %d %q", code, msg)
	}
	if code, msg := put(path("vm1", "pause") + "?uid=other"); code != http.StatusConflict || !strings.Contains(msg, "replaced") {
		t.Errorf("pause of a replaced VMI: %d %q", code, msg)
	}
	if code, msg := put(path("vm2", "pause")); code != http.StatusNotFound {
		t.Errorf("pause of an unknown VMI: %d %q", code, msg)
	}
	if code, msg := put(path("vm1", "reset")); code != http.StatusOK {
		t.Errorf("reset: %d %q", code, msg)
	}
	if code, msg := put(path("vm1", "freeze") + "?unfreezeTimeout=5m0s"); code != http.StatusOK {
		t.Errorf("freeze: %d %q", code, msg)
	}
	if code, msg := put(path("vm1", "freeze")); code != http.StatusBadRequest || !strings.Contains(msg, "unfreezeTimeout") {
		t.Errorf("freeze without a timeout: %d %q, want 400 naming unfreezeTimeout", code, msg)
	}
	if code, msg := put(path("vm1", "unfreeze")); code != http.StatusOK {
		t.Errorf("unfreeze: %d %q", code, msg)
	}
	if code, msg := put(path("vm1", "powercycle")); code != http.StatusNotFound || !strings.Contains(msg, "reset, freeze or unfreeze") {
		t.Errorf("unknown action: %d %q", code, msg)
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if got := strings.Join(fake.calls, ","); !strings.HasSuffix(got, "Pause,Pause,Unpause,Reset,Freeze 5m0s,Unfreeze") {
		t.Errorf("the launcher received %s", got)
	}
}
