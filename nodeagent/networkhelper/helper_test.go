package networkhelper

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/vireo-dev/vireo/internal/podnetwork"
	"github.com/vireo-dev/vireo/internal/testsupport"
)

// The test builds, with real namespaces: a "client" namespace, a "pod" namespace joined to it
// by a veth pair (the Pod's eth0 at 10.99.0.1), and a "guest" namespace that stands for QEMU's
// guest on the bridge (a veth on k6t-eth0 at 10.0.2.2, where QEMU's tap would be). The helper
// sets up the pod namespace over its socket, as the node agent asks it to.

func run(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, out)
	}
}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("this test creates network namespaces and needs root (CI runs as root)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Fatal("this test needs the ip command (iproute2)")
	}
}

// inNS runs fn on a thread in namespace name.
func inNS(t *testing.T, name string, fn func() error) {
	t.Helper()
	if err := testsupport.InNetns(name, fn); err != nil {
		t.Fatal(err)
	}
}

func namespaces(t *testing.T) (client, pod, guest string) {
	requireRoot(t)
	suffix := fmt.Sprint(os.Getpid())
	client, pod, guest = "vnh-c"+suffix, "vnh-p"+suffix, "vnh-g"+suffix
	for _, ns := range []string{client, pod, guest} {
		run(t, "ip", "netns", "add", ns)
		t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
		run(t, "ip", "-n", ns, "link", "set", "lo", "up")
	}
	run(t, "ip", "-n", client, "link", "add", "c0", "type", "veth", "peer", "name", "eth0", "netns", pod)
	run(t, "ip", "-n", client, "addr", "add", "10.99.0.2/24", "dev", "c0")
	run(t, "ip", "-n", client, "link", "set", "c0", "up")
	run(t, "ip", "-n", pod, "addr", "add", "10.99.0.1/24", "dev", "eth0")
	run(t, "ip", "-n", pod, "link", "set", "eth0", "up")
	return client, pod, guest
}

// configure does what the launcher and the node agent do: the pod namespace's descriptors
// (its own and /dev/net/tun opened there) go to the helper with req.
func configure(t *testing.T, dir, pod string, req *podnetwork.Request) error {
	t.Helper()
	var ns, tun *os.File
	inNS(t, pod, func() error {
		var err error
		if ns, err = os.Open("/proc/thread-self/ns/net"); err != nil {
			return err
		}
		tun, err = os.OpenFile(podnetwork.TunDevice, os.O_RDWR, 0)
		return err
	})
	defer ns.Close()
	defer tun.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return Configure(ctx, dir, req, ns, tun)
}

func startHelper(t *testing.T) string {
	dir := t.TempDir()
	l, err := Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = ServeOn(ctx, l) }()
	return dir
}

// attachGuest puts a veth on the bridge whose other end, in guest, has the guest's address.
func attachGuest(t *testing.T, pod, guest string) {
	run(t, "ip", "-n", pod, "link", "add", "g0", "type", "veth", "peer", "name", "eth0", "netns", guest)
	run(t, "ip", "-n", pod, "link", "set", "g0", "master", podnetwork.Bridge, "up")
	run(t, "ip", "-n", guest, "addr", "add", "10.0.2.2/24", "dev", "eth0")
	run(t, "ip", "-n", guest, "link", "set", "eth0", "up")
	run(t, "ip", "-n", guest, "route", "add", "default", "via", "10.0.2.1")
}

// listen serves, in namespace ns, a TCP port that answers each connection with the address it
// came from.
func listen(t *testing.T, ns, addr string) {
	var l net.Listener
	inNS(t, ns, func() error {
		var err error
		l, err = net.Listen("tcp", addr)
		return err
	})
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_, _ = io.WriteString(c, c.RemoteAddr().(*net.TCPAddr).IP.String())
			c.Close()
		}
	}()
}

// dial connects from namespace ns and returns what the server said.
func dial(t *testing.T, ns, addr string) (string, error) {
	var said string
	var dialErr error
	inNS(t, ns, func() error {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			dialErr = err
			return nil
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		b, err := io.ReadAll(c)
		said, dialErr = string(b), err
		return nil
	})
	return said, dialErr
}

func TestEveryPortReachesTheGuest(t *testing.T) {
	client, pod, guest := namespaces(t)
	dir := startHelper(t)
	req := &podnetwork.Request{Version: podnetwork.Version, AllPorts: true, TapOwner: 107}
	if err := configure(t, dir, pod, req); err != nil {
		t.Fatalf("Configure: %v", err)
	}
	owner, err := exec.Command("ip", "netns", "exec", pod, "cat", "/sys/class/net/tap0/owner").Output()
	if err != nil || strings.TrimSpace(string(owner)) != "107" {
		t.Errorf("tap0's owner = %q (%v), want 107", owner, err)
	}
	// A second request for the same Pod (the agent restarted) succeeds and changes nothing.
	if err := configure(t, dir, pod, req); err != nil {
		t.Fatalf("second Configure: %v", err)
	}
	attachGuest(t, pod, guest)
	listen(t, guest, "10.0.2.2:2222")
	listen(t, pod, "0.0.0.0:7777") // a socket of the Pod's own: not reachable from outside
	listen(t, client, "10.99.0.2:8080")

	if said, err := dial(t, client, "10.99.0.1:2222"); err != nil || said != "10.99.0.2" {
		t.Errorf("client -> Pod:2222 = %q, %v; want the guest answering and seeing the client 10.99.0.2", said, err)
	}
	if said, err := dial(t, client, "10.99.0.1:7777"); err == nil {
		t.Errorf("client -> Pod:7777 reached %q; every port is the guest's, the Pod's own sockets stay unreachable", said)
	}
	if said, err := dial(t, guest, "10.99.0.2:8080"); err != nil || said != "10.99.0.1" {
		t.Errorf("guest -> client = %q, %v; want it masqueraded behind the Pod's 10.99.0.1", said, err)
	}
	// UDP too: a datagram to any port of the Pod reaches the guest, and its answer returns.
	echoUDP(t, guest, "10.0.2.2:5353")
	if said, err := exchangeUDP(t, client, "10.99.0.1:5353", "ping"); err != nil || said != "ping from 10.99.0.2" {
		t.Errorf("client -> Pod:5353/udp = %q, %v; want the guest's echo", said, err)
	}
}

// echoUDP serves, in namespace ns, a UDP port that answers each datagram with it and its sender.
func echoUDP(t *testing.T, ns, addr string) {
	var pc net.PacketConn
	inNS(t, ns, func() error {
		var err error
		pc, err = net.ListenPacket("udp", addr)
		return err
	})
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = pc.WriteTo([]byte(string(buf[:n])+" from "+from.(*net.UDPAddr).IP.String()), from)
		}
	}()
}

// exchangeUDP sends msg from namespace ns and returns the answer.
func exchangeUDP(t *testing.T, ns, addr, msg string) (string, error) {
	var said string
	var xErr error
	inNS(t, ns, func() error {
		c, err := net.Dial("udp", addr)
		if err != nil {
			xErr = err
			return nil
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, xErr = c.Write([]byte(msg)); xErr != nil {
			return nil
		}
		buf := make([]byte, 1500)
		n, err := c.Read(buf)
		said, xErr = string(buf[:n]), err
		return nil
	})
	return said, xErr
}

func TestListedPortsOnly(t *testing.T) {
	client, pod, guest := namespaces(t)
	dir := startHelper(t)
	req := &podnetwork.Request{Version: podnetwork.Version, Ports: []podnetwork.Port{{Protocol: "tcp", Port: 2222}}, TapOwner: 107}
	if err := configure(t, dir, pod, req); err != nil {
		t.Fatalf("Configure: %v", err)
	}
	attachGuest(t, pod, guest)
	listen(t, guest, "10.0.2.2:2222")
	listen(t, guest, "10.0.2.2:3333")
	listen(t, pod, "0.0.0.0:3333")
	if said, err := dial(t, client, "10.99.0.1:2222"); err != nil || said != "10.99.0.2" {
		t.Errorf("client -> listed port = %q, %v; want the guest", said, err)
	}
	_, err := dial(t, client, "10.99.0.1:3333")
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("client -> unlisted port: %v; want connection refused (neither the guest nor the Pod's own socket)", err)
	}
	// Now every port: the request replaces the rules.
	req.AllPorts, req.Ports = true, nil
	if err := configure(t, dir, pod, req); err != nil {
		t.Fatalf("Configure with every port: %v", err)
	}
	if said, err := dial(t, client, "10.99.0.1:3333"); err != nil || said != "10.99.0.2" {
		t.Errorf("after switching to every port: client -> 3333 = %q, %v; want the guest", said, err)
	}
}

func TestRefusesWhatIsNotANetworkNamespace(t *testing.T) {
	requireRoot(t)
	dir := startHelper(t)
	f, err := os.Open("/proc/self/ns/mnt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	err = Configure(context.Background(), dir, &podnetwork.Request{Version: podnetwork.Version, AllPorts: true}, f, nil)
	if err == nil || !strings.Contains(err.Error(), "not a network namespace") {
		t.Errorf("Configure with a mount namespace: %v", err)
	}
	// The test's own namespace, read on a thread that never entered another.
	ownc := make(chan *os.File)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		f, _ := os.Open("/proc/thread-self/ns/net")
		ownc <- f
	}()
	own := <-ownc
	defer own.Close()
	err = Configure(context.Background(), dir, &podnetwork.Request{Version: podnetwork.Version, AllPorts: true}, own, nil)
	if err == nil || !strings.Contains(err.Error(), "own network namespace") {
		t.Errorf("Configure with the helper's own namespace: %v", err)
	}
}
