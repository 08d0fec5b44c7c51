package e2e

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestHostComponentsListenOnlyWhereTheyMust reads the kernel's table of listening TCP
// sockets (no traffic is sent): kube-apiserver listens only on the host end of the
// network namespace's link, where vireo-apiserver reaches it, and etcd,
// kube-controller-manager and kube-scheduler only on loopback; none on a wildcard
// address, so no other interface of the machine exposes them.
func TestHostComponentsListenOnlyWhereTheyMust(t *testing.T) {
	t.Parallel()
	opts := cluster.Options()
	p, hostIP := opts.Ports, opts.Network.HostIP.String()
	want := map[int]string{
		p.KubeAPIServer:     hostIP,
		p.EtcdClient:        "127.0.0.1",
		p.EtcdPeer:          "127.0.0.1",
		p.ControllerManager: "127.0.0.1",
		p.Scheduler:         "127.0.0.1",
	}
	listening := listeningSockets(t)
	for port, addr := range want {
		got := listening[port]
		if len(got) == 0 {
			t.Errorf("nothing listens on port %d", port)
			continue
		}
		for _, a := range got {
			if a != addr {
				t.Errorf("port %d: listening on %s, want only %s (all: %v)", port, a, addr, got)
			}
		}
	}
	if server := kubectl(t, "config", "view", "--minify", "-o", "jsonpath={.clusters[0].cluster.server}"); server != cluster.KubeAPIServerURL() {
		t.Errorf("the admin kubeconfig points at %s, want %s", server, cluster.KubeAPIServerURL())
	}
	// The admin kubeconfig works from the host, where the tests run.
	kubectl(t, "get", "--raw", "/readyz")
}

// listeningSockets maps each TCP port in LISTEN state to the local addresses bound to
// it, from tcp and tcp6 of the host's network namespace: this thread's (/proc/thread-self),
// locked to it. /proc/net is the main thread's, which a test in a node's network namespace
// (testsupport.InNetns, whose thread is never returned) may have entered.
func listeningSockets(t *testing.T) map[int][]string {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	out := map[int][]string{}
	for _, file := range []string{"/proc/thread-self/net/tcp", "/proc/thread-self/net/tcp6"} {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 4 || fields[3] != "0A" { // 0A: TCP_LISTEN
				continue
			}
			ip, port, err := parseProcAddr(fields[1])
			if err != nil {
				t.Fatalf("%s: %q: %v", file, sc.Text(), err)
			}
			out[port] = append(out[port], ip.String())
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// parseProcAddr decodes /proc/net/tcp's "0100007F:1F90": the address as 32-bit words in
// host (little-endian) byte order, then the port in hex.
func parseProcAddr(s string) (net.IP, int, error) {
	hexIP, hexPort, ok := strings.Cut(s, ":")
	if !ok {
		return nil, 0, fmt.Errorf("no port in %q", s)
	}
	raw, err := hex.DecodeString(hexIP)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return nil, 0, fmt.Errorf("address %q", hexIP)
	}
	for i := 0; i < len(raw); i += 4 {
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	port, err := strconv.ParseUint(hexPort, 16, 16)
	if err != nil {
		return nil, 0, err
	}
	return net.IP(raw), int(port), nil
}
