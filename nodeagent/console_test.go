package nodeagent

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	corelisters "k8s.io/client-go/listers/core/v1"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	vireofake "github.com/vireo-dev/vireo/generated/clientset/versioned/fake"
	vireolisters "github.com/vireo-dev/vireo/generated/listers/core/v1"
	"github.com/vireo-dev/vireo/internal/nodeagentapi"
	"github.com/vireo-dev/vireo/launcher/protocol"
	"github.com/vireo-dev/vireo/nodeagent/nodedirs/nodedirstest"
)

// streamPodUID is the streamFixture's launcher Pod.
const streamPodUID = types.UID("p1")

// streamFixture is a node agent with one Running VMI whose launcher Pod's emptyDir holds real
// unix sockets standing in for QEMU's: the console echoes, VNC greets with RFB 003.008 and can flood.
type streamFixture struct {
	agent  *Agent
	srv    *httptest.Server
	vmi    *v1.VirtualMachineInstance
	vmiIdx cache.Indexer
	// live is what vireo-apiserver answers a GET of a VMI with; nil: the same as vmiIdx.
	live    cache.Indexer
	flooded atomic.Int64
	flood   bool
}

func newStreamFixture(t *testing.T, flood bool, ping time.Duration) *streamFixture {
	t.Helper()
	// The socket paths must stay under the 108-byte limit of a unix socket address.
	dirs := nodedirstest.New(t)
	dir := nodedirstest.EmptyDir(t, dirs, streamPodUID)
	f := &streamFixture{flood: flood}
	f.vmi = &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vm1", UID: "vmi-uid"},
		Status: v1.VirtualMachineInstanceStatus{Phase: v1.Running, NodeName: "node1"}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "virt-launcher-vm1", UID: streamPodUID,
		Labels:          map[string]string{v1.CreatedByLabel: "vmi-uid", v1.AppLabel: v1.LauncherApp},
		OwnerReferences: []metav1.OwnerReference{{Kind: "VirtualMachineInstance", Name: "vm1", UID: "vmi-uid", Controller: ptr.To(true)}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	f.vmiIdx = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	podIdx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	_ = f.vmiIdx.Add(f.vmi)
	_ = podIdx.Add(pod)
	noTargets := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	f.agent = assemble(&Options{NodeName: "node1", StreamPing: ping, RunDir: dirs.Root, KubeletPodsDir: dirs.Pods}, f.apiserver(), nil,
		listers{vmis: vireolisters.NewVirtualMachineInstanceLister(f.vmiIdx), targetVMIs: vireolisters.NewVirtualMachineInstanceLister(noTargets),
			pods: corelisters.NewPodLister(podIdx)}, nil)
	f.listen(t, filepath.Join(dir, protocol.ConsoleSocket), func(c net.Conn) { _, _ = io.Copy(c, c) })
	f.listen(t, filepath.Join(dir, protocol.VNCSocket), func(c net.Conn) {
		if _, err := c.Write([]byte("RFB 003.008\n")); err != nil || !f.flood {
			_, _ = io.Copy(io.Discard, c)
			return
		}
		chunk := bytes.Repeat([]byte{'x'}, 64<<10)
		for f.flooded.Load() < 256<<20 {
			n, err := c.Write(chunk)
			f.flooded.Add(int64(n))
			if err != nil {
				return
			}
		}
	})
	mux := http.NewServeMux()
	f.agent.streams.Register(mux)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		f.agent.closeAll()
		f.srv.Close()
	})
	return f
}

// apiserver is a clientset whose GET of a VMI answers from f.live (or f.vmiIdx).
func (f *streamFixture) apiserver() *vireofake.Clientset {
	c := vireofake.NewSimpleClientset()
	c.PrependReactor("get", "virtualmachineinstances", func(action clienttesting.Action) (bool, kruntime.Object, error) {
		get := action.(clienttesting.GetAction)
		store := f.live
		if store == nil {
			store = f.vmiIdx
		}
		obj, found, err := store.GetByKey(get.GetNamespace() + "/" + get.GetName())
		if err != nil || !found {
			return true, nil, apierrors.NewNotFound(v1.Resource("virtualmachineinstances"), get.GetName())
		}
		return true, obj.(*v1.VirtualMachineInstance).DeepCopy(), nil
	})
	return c
}

// listen serves a unix socket until the test ends, each connection closed when serve returns.
func (f *streamFixture) listen(t *testing.T, path string, serve func(net.Conn)) {
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); serve(c) }()
		}
	}()
}

func (f *streamFixture) dial(t *testing.T, kind, query string, protocols ...string) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	if protocols == nil {
		protocols = []string{v1.PlainStreamProtocolName}
	}
	d := websocket.Dialer{Subprotocols: protocols, HandshakeTimeout: 5 * time.Second}
	u := "ws" + strings.TrimPrefix(f.srv.URL, "http") + nodeagentapi.VMIPath("ns", "vm1", kind) + query
	return d.Dial(u, nil)
}

// readUntil reads binary messages until their concatenation contains want.
func readUntil(t *testing.T, ws *websocket.Conn, want string) {
	t.Helper()
	_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	var got []byte
	for !bytes.Contains(got, []byte(want)) {
		typ, data, err := ws.ReadMessage()
		if err != nil {
			t.Fatalf("reading %q (got %q): %v", want, got, err)
		}
		if typ != websocket.BinaryMessage {
			t.Fatalf("message type %d, want binary", typ)
		}
		got = append(got, data...)
	}
}

// closeReason reads until the session's close frame and returns its text.
func closeReason(t *testing.T, ws *websocket.Conn) string {
	t.Helper()
	_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		if _, _, err := ws.ReadMessage(); err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				return ce.Text
			}
			t.Fatalf("session ended without a close frame: %v", err)
		}
	}
}

// resources counts goroutines and open file descriptors of the test process.
func resources(t *testing.T) (int, int) {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return runtime.NumGoroutine(), len(fds)
}

// waitBack polls until goroutines and descriptors are back at (or below) the baseline.
func waitBack(t *testing.T, g0, fd0 int) {
	t.Helper()
	var g, fd int
	if err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		g, fd = resources(t)
		return g <= g0 && fd <= fd0, nil
	}); err != nil {
		buf := make([]byte, 1<<20)
		t.Fatalf("leak: %d goroutines (was %d), %d fds (was %d)\n%s", g, g0, fd, fd0, buf[:runtime.Stack(buf, true)])
	}
}

func TestConsoleEchoTakeoverAndStop(t *testing.T) {
	f := newStreamFixture(t, false, 100*time.Millisecond)
	f.srv.Client().CloseIdleConnections()
	g0, fd0 := resources(t)

	first, resp, err := f.dial(t, nodeagentapi.StreamConsole, "")
	if err != nil {
		t.Fatalf("console: %v (%v)", err, resp)
	}
	if first.Subprotocol() != v1.PlainStreamProtocolName {
		t.Errorf("subprotocol %q, want %q", first.Subprotocol(), v1.PlainStreamProtocolName)
	}
	if err := first.WriteMessage(websocket.BinaryMessage, []byte("echo $((6*7))\n")); err != nil {
		t.Fatal(err)
	}
	readUntil(t, first, "echo $((6*7))")

	second, _, err := f.dial(t, nodeagentapi.StreamConsole, "")
	if err != nil {
		t.Fatalf("second console: %v", err)
	}
	if got := closeReason(t, first); got != nodeagentapi.CloseTakenOver {
		t.Errorf("first session's close message %q, want %q", got, nodeagentapi.CloseTakenOver)
	}
	first.Close()
	if err := second.WriteMessage(websocket.BinaryMessage, []byte("still here")); err != nil {
		t.Fatal(err)
	}
	readUntil(t, second, "still here")

	// An idle session outlives many keep-alive periods: the client only answers pings (10 of
	// them, over three times the silence after which a client is dropped).
	var pings atomic.Int32
	second.SetPingHandler(func(data string) error {
		pings.Add(1)
		return second.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(time.Second))
	})
	done := make(chan struct{})
	go func() { defer close(done); _ = closeReasonQuiet(second) }()
	err = wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		if f.agent.streams.Count(nodeagentapi.StreamConsole) != 1 {
			return false, errors.New("the idle session was dropped")
		}
		return pings.Load() >= 10, nil
	})
	if err != nil {
		t.Fatalf("idle console after %d pings: %v", pings.Load(), err)
	}
	// The VMI stops: the agent's reconcile ends its sessions.
	stopped := f.vmi.DeepCopy()
	stopped.Status.Phase = v1.Succeeded
	_ = f.vmiIdx.Update(stopped)
	if err := f.agent.sync(t.Context(), "ns/vm1"); err != nil {
		t.Fatal(err)
	}
	<-done
	second.Close()
	waitBack(t, g0, fd0)
}

// closeQuiet reads until the connection ends, for a goroutine that keeps a client answering pings.
func closeReasonQuiet(ws *websocket.Conn) string {
	for {
		if _, _, err := ws.ReadMessage(); err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				return ce.Text
			}
			return err.Error()
		}
	}
}

func TestConsoleRefusals(t *testing.T) {
	f := newStreamFixture(t, false, 100*time.Millisecond)
	status := func(kind, query string, protocols ...string) (int, string) {
		_, resp, err := f.dial(t, kind, query, protocols...)
		if err == nil || resp == nil {
			t.Fatalf("%s%s was accepted", kind, query)
		}
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := status(nodeagentapi.StreamConsole, "", "other.protocol"); code != http.StatusBadRequest || !strings.Contains(body, v1.PlainStreamProtocolName) {
		t.Errorf("wrong subprotocol: %d %q", code, body)
	}
	resp, err := http.Get(f.srv.URL + nodeagentapi.VMIPath("ns", "vm1", nodeagentapi.StreamConsole))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "websocket") {
		t.Errorf("plain GET: %d %q", resp.StatusCode, body)
	}
	if code, _ := status("shell", ""); code != http.StatusNotFound {
		t.Errorf("unknown stream kind: %d", code)
	}
	if code, body := status(nodeagentapi.StreamConsole, "?preserveSession=true"); code != http.StatusBadRequest {
		t.Errorf("preserveSession on console: %d %q", code, body)
	}
	for _, c := range []struct {
		phase v1.VirtualMachineInstancePhase
		code  int
	}{{v1.Scheduled, http.StatusBadRequest}, {v1.Succeeded, http.StatusConflict}, {v1.Failed, http.StatusConflict}} {
		vmi := f.vmi.DeepCopy()
		vmi.Status.Phase = c.phase
		_ = f.vmiIdx.Update(vmi)
		if code, body := status(nodeagentapi.StreamConsole, ""); code != c.code {
			t.Errorf("phase %s: %d %q, want %d", c.phase, code, body, c.code)
		}
	}
	_ = f.vmiIdx.Delete(f.vmi)
	if code, _ := status(nodeagentapi.StreamConsole, ""); code != http.StatusNotFound {
		t.Errorf("unknown VMI: %d", code)
	}
}

// TestConsoleWhileInformerLags: a VMI this node's informer still holds as Scheduled (or not at
// all) while vireo-apiserver already has it Running here gets its console; one vireo-apiserver
// has on another node does not.
func TestConsoleWhileInformerLags(t *testing.T) {
	f := newStreamFixture(t, false, time.Minute)
	f.live = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	_ = f.live.Add(f.vmi.DeepCopy())
	stale := f.vmi.DeepCopy()
	stale.Status.Phase = v1.Scheduled
	_ = f.vmiIdx.Update(stale)
	con, _, err := f.dial(t, nodeagentapi.StreamConsole, "")
	if err != nil {
		t.Fatalf("console of a VMI the informer holds as Scheduled: %v", err)
	}
	con.Close()
	_ = f.vmiIdx.Delete(stale)
	con, _, err = f.dial(t, nodeagentapi.StreamConsole, "")
	if err != nil {
		t.Fatalf("console of a VMI the informer has not seen: %v", err)
	}
	con.Close()
	elsewhere := f.vmi.DeepCopy()
	elsewhere.Status.NodeName = "node2"
	_ = f.live.Update(elsewhere)
	if _, resp, err := f.dial(t, nodeagentapi.StreamConsole, ""); err == nil || resp == nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("console of a VMI on another node: %v (%v)", resp, err)
	}
}

func TestVNCPreserveSessionAndReplace(t *testing.T) {
	f := newStreamFixture(t, false, 100*time.Millisecond)
	first, _, err := f.dial(t, nodeagentapi.StreamVNC, "")
	if err != nil {
		t.Fatal(err)
	}
	readUntil(t, first, "RFB 003.008\n")
	_, resp, err := f.dial(t, nodeagentapi.StreamVNC, "?preserveSession=true")
	if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("preserveSession with an active session: %v %v", err, resp)
	}
	second, _, err := f.dial(t, nodeagentapi.StreamVNC, "?preserveSession=false")
	if err != nil {
		t.Fatal(err)
	}
	if got := closeReason(t, first); got != nodeagentapi.CloseVNCReplaced {
		t.Errorf("close message %q, want %q", got, nodeagentapi.CloseVNCReplaced)
	}
	readUntil(t, second, "RFB 003.008\n")
}

// TestStreamBackPressure: a client that stops reading stops the guest's writes; the agent holds
// no more than its bounded buffers (the rest waits in kernel socket buffers).
func TestStreamBackPressure(t *testing.T) {
	f := newStreamFixture(t, true, 5*time.Second)
	g0, fd0 := resources(t)
	ws, _, err := f.dial(t, nodeagentapi.StreamVNC, "")
	if err != nil {
		t.Fatal(err)
	}
	var last int64 = -1
	if err := wait.PollUntilContextTimeout(context.Background(), 300*time.Millisecond, 20*time.Second, false, func(context.Context) (bool, error) {
		n := f.flooded.Load()
		stalled := n == last
		last = n
		return stalled, nil
	}); err != nil {
		t.Fatalf("the guest kept writing while nobody read: %d bytes", f.flooded.Load())
	}
	if last >= 64<<20 {
		t.Errorf("the guest wrote %d bytes to a client that read nothing", last)
	}
	t.Logf("guest stalled after %d bytes", last)
	// The session is alive, only held back: reading lets the guest write again.
	_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	for f.flooded.Load() < last+(8<<20) {
		if _, _, err := ws.ReadMessage(); err != nil {
			t.Fatalf("after the stall, the session ended: %v (guest wrote %d bytes)", err, f.flooded.Load())
		}
	}
	ws.Close()
	waitBack(t, g0, fd0)
}

// TestStreamsUnderConcurrentEnds: sessions opened while others take over and the VMI's sessions
// are ended over and over leave nothing behind (run with -race).
func TestStreamsUnderConcurrentEnds(t *testing.T) {
	f := newStreamFixture(t, false, 100*time.Millisecond)
	g0, fd0 := resources(t)
	stop := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		for {
			select {
			case <-stop:
				return
			default:
				f.agent.streams.EndVMI("ns", "vm1", nodeagentapi.CloseVMIStopped)
				runtime.Gosched()
			}
		}
	}()
	for i := 0; i < 20; i++ {
		ws, _, err := f.dial(t, nodeagentapi.StreamConsole, "")
		if err != nil {
			continue // refused while ending: fine, as long as nothing leaks
		}
		_ = closeReasonQuiet(ws)
		ws.Close()
	}
	close(stop)
	<-ended
	waitBack(t, g0, fd0)
}

// TestConsoleEndsSayingTheVMIMigrated: a VMI that moved to another node by migration leaves the
// source agent's informer, often before the source launcher's sockets close; its sessions end
// saying it migrated, not that it stopped, since its launcher here reported the guest leaving.
// A VMI deleted from a launcher that reported no migration ends them saying it stopped.
func TestConsoleEndsSayingTheVMIMigrated(t *testing.T) {
	f := newStreamFixture(t, false, 100*time.Millisecond)
	ws, resp, err := f.dial(t, nodeagentapi.StreamConsole, "")
	if err != nil {
		t.Fatalf("console: %v (%v)", err, resp)
	}
	defer ws.Close()
	session := f.agent.sessions.Ensure(streamPodUID, "vmi-uid", "ns/vm1")
	session.Record(&protocol.DomainStatus{Phase: protocol.DomainRunning, Migration: &protocol.MigrationStatus{UID: "m1", Phase: protocol.MigrationRunning}})
	_ = f.vmiIdx.Delete(f.vmi)
	if err := f.agent.sync(t.Context(), "ns/vm1"); err != nil {
		t.Fatal(err)
	}
	if got := closeReason(t, ws); got != nodeagentapi.CloseVMIMigrated {
		t.Errorf("close message %q, want %q", got, nodeagentapi.CloseVMIMigrated)
	}

	_ = f.vmiIdx.Add(f.vmi)
	ws2, resp, err := f.dial(t, nodeagentapi.StreamConsole, "")
	if err != nil {
		t.Fatalf("console: %v (%v)", err, resp)
	}
	defer ws2.Close()
	session.Record(&protocol.DomainStatus{Phase: protocol.DomainRunning})
	_ = f.vmiIdx.Delete(f.vmi)
	if err := f.agent.sync(t.Context(), "ns/vm1"); err != nil {
		t.Fatal(err)
	}
	if got := closeReason(t, ws2); got != nodeagentapi.CloseVMIStopped {
		t.Errorf("close message %q, want %q", got, nodeagentapi.CloseVMIStopped)
	}
}

// TestVNCSharedViewers: shared viewers (vnc?shared=true) replace no one and are not replaced;
// a display takes at most maxSharedViewers of them.
func TestVNCSharedViewers(t *testing.T) {
	f := newStreamFixture(t, false, 100*time.Millisecond)
	own, _, err := f.dial(t, nodeagentapi.StreamVNC, "")
	if err != nil {
		t.Fatal(err)
	}
	readUntil(t, own, "RFB 003.008\n")
	// The viewers stay referenced until the test ends: an unreachable connection is closed by
	// its finalizer at the next garbage collection, which ended viewers and freed their places.
	var viewers []*websocket.Conn
	defer func() {
		for _, v := range viewers {
			_ = v.Close()
		}
	}()
	for range 8 {
		v, _, err := f.dial(t, nodeagentapi.StreamVNC, "?shared=true")
		if err != nil {
			t.Fatal(err)
		}
		viewers = append(viewers, v)
		readUntil(t, v, "RFB 003.008\n")
	}
	if _, resp, err := f.dial(t, nodeagentapi.StreamVNC, "?shared=true"); err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a ninth shared viewer: %v %v, want 503", err, resp)
	}
	if _, resp, err := f.dial(t, nodeagentapi.StreamConsole, "?shared=true"); err == nil || resp == nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("a shared console: %v %v, want 400", err, resp)
	}
	// A client that is not shared replaces the VMI's own session only.
	replacing, _, err := f.dial(t, nodeagentapi.StreamVNC, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := closeReason(t, own); got != nodeagentapi.CloseVNCReplaced {
		t.Errorf("the replaced session's close message %q, want %q", got, nodeagentapi.CloseVNCReplaced)
	}
	readUntil(t, replacing, "RFB 003.008\n")
	if n := f.agent.streams.Count(nodeagentapi.StreamVNC); n != 9 {
		t.Errorf("%d VNC sessions open, want 9 (the replacing one and 8 shared viewers)", n)
	}
}
