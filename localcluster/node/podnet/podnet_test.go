package podnet

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary plays three parts, chosen by environment variables:
//   - by default, TestPodNetwork creates a node namespace and runs the binary again inside it
//     with nsenter --net (as the node process runs), where TestInNodeNetns exercises Network;
//   - envHelper=listen is a TCP server that a test starts inside a Pod's namespace.
const (
	envNode   = "VIREO_PODNET_TEST_NODE"  // node name, set for the run inside the node namespace
	envState  = "VIREO_PODNET_TEST_STATE" // the node's StateDir
	envHelper = "VIREO_PODNET_TEST_HELPER"
	envAddr   = "VIREO_PODNET_TEST_ADDR"
	envReply  = "VIREO_PODNET_TEST_REPLY"

	testPrefix = "vireo-pntest"
	// nobody is the user the listener drops to, so that binding port 80 exercises the Pod
	// namespace's ip_unprivileged_port_start.
	nobody = 65534
)

func TestMain(m *testing.M) {
	if os.Getenv(envHelper) == "listen" {
		if err := listen(os.Getenv(envAddr), os.Getenv(envReply)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// listen drops root, serves reply to every connection on addr, reports "ready" on stdout
// and returns when stdin closes (the test ended or died).
func listen(addr, reply string) error {
	if err := syscall.Setgid(nobody); err != nil {
		return err
	}
	if err := syscall.Setuid(nobody); err != nil {
		return err
	}
	l, err := net.Listen("tcp4", addr)
	if err != nil {
		return err
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_, _ = io.WriteString(c, reply)
			_ = c.Close()
		}
	}()
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return nil
}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates network namespaces")
	}
	for _, cmd := range []string{"ip", "nsenter"} {
		if _, err := exec.LookPath(cmd); err != nil {
			t.Skipf("needs %s: %v", cmd, err)
		}
	}
}

func randomSuffix(t *testing.T) string {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// hostLinkExists reports whether the calling process's namespace has the link.
func hostLinkExists(name string) bool {
	return exec.Command("ip", "link", "show", name).Run() == nil
}

// TestPodNetwork creates a node namespace, runs TestInNodeNetns inside it as a node process
// runs (nsenter --net, sharing the mount namespace) and removes every namespace it made.
func TestPodNetwork(t *testing.T) {
	if os.Getenv(envNode) != "" {
		t.Skip("this is the run inside the node namespace")
	}
	requireRoot(t)
	node := randomSuffix(t)
	nodeNetns := testPrefix + "-" + node
	stateDir := t.TempDir()
	hostHadBridge := hostLinkExists("cni0")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	t.Cleanup(func() {
		names, err := listNetns(nodeNetns)
		if err != nil {
			t.Error(err)
		}
		for _, name := range names {
			if err := deleteNetns(context.Background(), name); err != nil {
				t.Error(err)
			}
		}
	})
	if err := runIP(ctx, "netns", "add", nodeNetns); err != nil {
		t.Fatal(err)
	}
	if err := runIP(ctx, "-n", nodeNetns, "link", "set", "lo", "up"); err != nil {
		t.Fatal(err)
	}

	args := []string{"--net=" + filepath.Join(netnsDir, nodeNetns), os.Args[0],
		"-test.run=^TestInNodeNetns$", "-test.v", "-test.count=1", "-test.timeout=150s"}
	cmd := exec.CommandContext(ctx, "nsenter", args...)
	cmd.Env = append(os.Environ(), envNode+"="+node, envState+"="+stateDir)
	out, err := cmd.CombinedOutput()
	// Prefixed, so that the inner run's result lines are not read as this run's.
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		t.Log("| " + line)
	}
	if err != nil {
		t.Fatalf("the run inside node namespace %s failed: %v", nodeNetns, err)
	}
	if !strings.Contains(string(out), "--- PASS: TestInNodeNetns") {
		t.Fatalf("TestInNodeNetns did not run and pass inside the node namespace")
	}
	if left, _ := listNetns(nodeNetns + podInfix); len(left) > 0 {
		t.Errorf("Pod network namespaces left after their teardown: %v", left)
	}
	if !hostHadBridge && hostLinkExists("cni0") {
		t.Errorf("a cni0 bridge appeared in the test's own namespace: the plugins must only touch the node's")
	}
}

// startListener runs the helper server inside a Pod's namespace; it serves until owner (the
// test, or a parent of a subtest that starts it) ends.
func startListener(t *testing.T, owner interface{ Cleanup(func()) }, netnsPath, addr, reply string) {
	t.Helper()
	cmd := exec.Command("nsenter", "--net="+netnsPath, os.Args[0])
	cmd.Env = append(os.Environ(), envHelper+"=listen", envAddr+"="+addr, envReply+"="+reply)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	owner.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		t.Fatalf("listener %s in %s did not start: %v: %s", addr, netnsPath, err, stderr.String())
	}
}

// dialFrom connects to addr from inside the namespace at netnsPath and returns what the
// server sent.
func dialFrom(ctx context.Context, netnsPath, addr string) (string, error) {
	var conn net.Conn
	err := inNetns(netnsPath, func() error {
		var err error
		d := net.Dialer{Timeout: 2 * time.Second}
		conn, err = d.DialContext(ctx, "tcp4", addr)
		return err
	})
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	b, err := io.ReadAll(conn)
	return string(b), err
}
