package launchersession_test

import (
	"context"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/vireo-dev/vireo/launcher/protocol"
	"github.com/vireo-dev/vireo/nodeagent/launchersession"
	"github.com/vireo-dev/vireo/nodeagent/nodedirs/nodedirstest"
)

// eventLauncher is a launcher that reports Running, then Paused, and holds the stream open.
// The calls a session never makes are left to the embedded (nil) interface.
type eventLauncher struct{ protocol.Server }

func (eventLauncher) Hello(context.Context, *protocol.HelloRequest) (*protocol.HelloResponse, error) {
	return &protocol.HelloResponse{Version: protocol.Version, LauncherVersion: "test", VMIUID: "vmi-uid"}, nil
}

func (eventLauncher) Events(_ *protocol.Empty, s protocol.EventSender) error {
	for _, phase := range []protocol.DomainPhase{protocol.DomainRunning, protocol.DomainPaused} {
		if err := s.Send(&protocol.DomainStatus{Phase: phase}); err != nil {
			return err
		}
	}
	<-s.Context().Done()
	return nil
}

// TestSessionFollowsTheLauncher: a session connects to the launcher in its Pod's emptyDir,
// reports each event with the one before, keeps the last; work run on it ends with it, and a
// stopped session or registry runs nothing more.
func TestSessionFollowsTheLauncher(t *testing.T) {
	dirs := nodedirstest.New(t)
	podUID := types.UID("p1")
	l, err := net.Listen("unix", filepath.Join(nodedirstest.EmptyDir(t, dirs, podUID), protocol.CommandSocket))
	if err != nil {
		t.Fatal(err)
	}
	srv := protocol.NewServer(eventLauncher{})
	go srv.Serve(l)
	t.Cleanup(srv.Stop)

	var mu sync.Mutex
	var seen []string
	reg := launchersession.NewRegistry(dirs, func(key string, prev, st *protocol.DomainStatus) {
		mu.Lock()
		defer mu.Unlock()
		before := "none"
		if prev != nil {
			before = string(prev.Phase)
		}
		seen = append(seen, key+":"+before+"->"+string(st.Phase))
	})
	t.Cleanup(reg.StopAll)
	s := reg.Ensure(podUID, "vmi-uid", "ns/vm")
	if reg.Ensure(podUID, "vmi-uid", "ns/vm") != s || reg.Get(podUID) != s {
		t.Fatal("a second Ensure started another session")
	}
	if err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		client, dom, _ := s.State()
		return client != nil && dom != nil && dom.Phase == protocol.DomainPaused, nil
	}); err != nil {
		t.Fatal("the session never reported the launcher's last event")
	}
	mu.Lock()
	if len(seen) != 2 || seen[0] != "ns/vm:none->Running" || seen[1] != "ns/vm:Running->Paused" {
		t.Errorf("notified %v", seen)
	}
	mu.Unlock()
	if dom := reg.Status(podUID); dom == nil || dom.Phase != protocol.DomainPaused {
		t.Errorf("Status = %v, want Paused", dom)
	}

	ended := make(chan struct{})
	s.Go(func(ctx context.Context) { <-ctx.Done(); close(ended) })
	reg.Forget(podUID)
	select {
	case <-ended:
	default:
		t.Fatal("Forget returned before the session's work ended")
	}
	if reg.Get(podUID) != nil || reg.Status(podUID) != nil {
		t.Error("a forgotten session is still registered")
	}
	ran := make(chan struct{}, 1)
	s.Go(func(context.Context) { ran <- struct{}{} })
	reg.StopAll()
	reg.Ensure(podUID, "vmi-uid", "ns/vm").Go(func(context.Context) { ran <- struct{}{} })
	if len(ran) != 0 || reg.Get(podUID) != nil {
		t.Error("work ran on a stopped session, or a session started after StopAll")
	}
}
