package portforward

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// objects is a Getter over a fixed set of objects.
type objects map[string]runtime.Object

func (o objects) Get(_ context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	if obj, ok := o[name]; ok {
		return obj, nil
	}
	return nil, apierrors.NewNotFound(v1.Resource("things"), name)
}

func TestParseTarget(t *testing.T) {
	for _, c := range []struct {
		in      string
		want    Target
		wantErr string
	}{
		{"22", Target{22, "tcp"}, ""},
		{"53/udp", Target{53, "udp"}, ""},
		{"80/tcp", Target{80, "tcp"}, ""},
		{"0", Target{}, "from 1 to 65535"},
		{"65536", Target{}, "from 1 to 65535"},
		{"ssh", Target{}, `"ssh" must be a number`},
		{"22/sctp", Target{}, `"sctp" must be tcp or udp`},
		{"22/TCP", Target{}, "must be tcp or udp"},
		{"22/tcp/x", Target{}, "needs a port"},
	} {
		got, err := ParseTarget(strings.Split(c.in, "/"))
		switch {
		case c.wantErr == "" && (err != nil || got != c.want):
			t.Errorf("%q: %+v, %v; want %+v", c.in, got, err, c.want)
		case c.wantErr != "" && (err == nil || !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%q: %v, want a bad request saying %q", c.in, err, c.wantErr)
		}
	}
}

// runningVMI is a running VMI whose interface address is ip, forwarding ports (all when none).
func runningVMI(name, ip string, ports ...v1.Port) *v1.VirtualMachineInstance {
	vmi := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	vmi.Spec.Domain.Devices.Interfaces = []v1.Interface{{Name: "default", Ports: ports}}
	vmi.Status.Phase = v1.Running
	vmi.Status.Interfaces = []v1.VirtualMachineInstanceNetworkInterface{{Name: "default", IP: ip}}
	return vmi
}

func TestForwardable(t *testing.T) {
	paused := runningVMI("paused", "10.0.0.1")
	paused.Status.Conditions = []v1.VirtualMachineInstanceCondition{{Type: v1.VirtualMachineInstancePaused, Status: v1.ConditionTrue}}
	pending := runningVMI("pending", "")
	pending.Status.Phase = v1.Scheduled
	ended := runningVMI("ended", "10.0.0.1")
	ended.Status.Phase = v1.Succeeded
	for _, c := range []struct {
		vmi     *v1.VirtualMachineInstance
		target  Target
		code    int32
		message string
	}{
		{runningVMI("all", "10.0.0.1"), Target{22, "tcp"}, 0, ""},
		{runningVMI("listed", "10.0.0.1", v1.Port{Port: 80}), Target{80, "tcp"}, 0, ""},
		{runningVMI("listed", "10.0.0.1", v1.Port{Port: 53, Protocol: "UDP"}), Target{53, "udp"}, 0, ""},
		{runningVMI("listed", "10.0.0.1", v1.Port{Port: 80}), Target{22, "tcp"}, http.StatusBadRequest, "not one of them"},
		{runningVMI("listed", "10.0.0.1", v1.Port{Port: 53, Protocol: "UDP"}), Target{53, "tcp"}, http.StatusBadRequest, "not one of them"},
		{runningVMI("noip", ""), Target{22, "tcp"}, http.StatusBadRequest, "no network interface address"},
		{paused, Target{22, "tcp"}, http.StatusConflict, "VMI is paused"},
		{pending, Target{22, "tcp"}, http.StatusBadRequest, "not running"},
		{ended, Target{22, "tcp"}, http.StatusConflict, "has ended"},
	} {
		err := forwardable(c.vmi, c.target)
		var code int32
		if err != nil {
			code = err.(apierrors.APIStatus).Status().Code
		}
		if code != c.code || (err != nil && !strings.Contains(err.Error(), c.message)) {
			t.Errorf("%s %+v: %v (code %d), want code %d saying %q", c.vmi.Name, c.target, err, code, c.code, c.message)
		}
	}
}

func TestVMIForVM(t *testing.T) {
	vm := &v1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vm", UID: "vm-uid"}}
	owned := runningVMI("vm", "10.0.0.1")
	owned.OwnerReferences = []metav1.OwnerReference{{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachine", Name: "vm", UID: "vm-uid", Controller: ptr.To(true)}}
	stray := runningVMI("stopped", "10.0.0.1")
	vms := objects{"vm": vm, "stopped": &v1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "stopped", UID: "other"}},
		"novmi": &v1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "novmi"}}}
	f := New(objects{"vm": owned, "stopped": stray}, vms)
	if got, err := f.vmiFor(t.Context(), "virtualmachines", "vm"); err != nil || got != owned {
		t.Errorf("VM with its VMI: %v, %v", got, err)
	}
	for _, name := range []string{"stopped", "novmi"} {
		if _, err := f.vmiFor(t.Context(), "virtualmachines", name); !apierrors.IsConflict(err) || !strings.Contains(err.Error(), "VMI is not started") {
			t.Errorf("VM %s: %v, want 409 VMI is not started", name, err)
		}
	}
	if _, err := f.vmiFor(t.Context(), "virtualmachines", "unknown"); !apierrors.IsNotFound(err) {
		t.Errorf("unknown VM: %v, want 404", err)
	}
}

// serveTunnel serves the forwarder's handler for vmi's target and returns a websocket client
// connected to it.
func serveTunnel(t *testing.T, vmi *v1.VirtualMachineInstance, target Target) *websocket.Conn {
	t.Helper()
	f := New(objects{vmi.Name: vmi}, objects{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, err := f.Handler(r.Context(), "virtualmachineinstances", vmi.Name, target)
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	d := websocket.Dialer{Subprotocols: []string{v1.PlainStreamProtocolName}}
	ws, resp, err := d.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		body := ""
		if resp != nil {
			b, _ := io.ReadAll(resp.Body)
			body = string(b)
		}
		t.Fatalf("dial: %v %s", err, body)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}

func TestTCPTunnel(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() { // echo one connection upper-cased, then close it
		c, err := l.Accept()
		if err != nil {
			return
		}
		b, _ := io.ReadAll(io.LimitReader(c, 5))
		_, _ = c.Write(bytes.ToUpper(b))
		c.Close()
	}()
	port := l.Addr().(*net.TCPAddr).Port
	ws := serveTunnel(t, runningVMI("tcp", "127.0.0.1"), Target{port, "tcp"})
	// Two messages, one stream: the guest reads "hello" across them.
	for _, m := range []string{"hel", "lo"} {
		if err := ws.WriteMessage(websocket.BinaryMessage, []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	var got []byte
	_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		kind, b, err := ws.ReadMessage()
		if err != nil {
			if !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
				t.Fatalf("after %q: %v, want a normal close when the guest closes", got, err)
			}
			break
		}
		if kind != websocket.BinaryMessage {
			t.Fatalf("message kind %d, want binary", kind)
		}
		got = append(got, b...)
	}
	if string(got) != "HELLO" {
		t.Errorf("got %q, want HELLO", got)
	}
}

func TestUDPTunnel(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	go func() { // answer each datagram with its length
		buf := make([]byte, 70000)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = pc.WriteTo([]byte(strconv.Itoa(n)), from)
		}
	}()
	port := pc.LocalAddr().(*net.UDPAddr).Port
	ws := serveTunnel(t, runningVMI("udp", "127.0.0.1", v1.Port{Port: int32(port), Protocol: "UDP"}), Target{port, "udp"})
	_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	// Each message is one datagram, whatever its size.
	for _, size := range []int{1, 1400, 9000} {
		if err := ws.WriteMessage(websocket.BinaryMessage, bytes.Repeat([]byte("x"), size)); err != nil {
			t.Fatal(err)
		}
		_, b, err := ws.ReadMessage()
		if err != nil || string(b) != strconv.Itoa(size) {
			t.Errorf("datagram of %d bytes: answer %q, %v", size, b, err)
		}
	}
}

func TestRefusedPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close() // nothing listens there now
	f := New(objects{"vm": runningVMI("vm", "127.0.0.1")}, objects{})
	_, err = f.Handler(t.Context(), "virtualmachineinstances", "vm", Target{port, "tcp"})
	if !apierrors.IsServiceUnavailable(err) || !strings.Contains(err.Error(), "nothing answers on tcp port "+strconv.Itoa(port)+" of VMI ns/vm") {
		t.Errorf("refused port: %v, want 503 naming the port and VMI", err)
	}
}
