package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// lockedBuffer collects a process's output while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// typeUntil42 writes echo $((6*7)) to w until the output after offset holds the answer, each
// time after a Ctrl-C that discards what a booting guest read of an earlier attempt.
func typeUntil42(t *testing.T, w io.Writer, out, errOut *lockedBuffer, offset int) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 3*time.Second, 120*time.Second, true, func(context.Context) (bool, error) {
		if _, err := io.WriteString(w, "\x03\necho $((6*7))\n"); err != nil {
			return false, err
		}
		return answer42.MatchString(out.String()[offset:]), nil
	})
	if err != nil {
		t.Fatalf("vireoctl console never showed 42 (%v); output:\n%s\nstderr:\n%s", err, out.String()[offset:], errOut.String())
	}
}

// vireoctlSession is a vireoctl console kept open, its input typed through a pipe.
type vireoctlSession struct {
	stdin       io.WriteCloser
	out, errOut *lockedBuffer
	offset      int
	waited      chan error
}

// startVireoctlConsole opens vireoctl console on VMI name and waits until the guest answers.
func startVireoctlConsole(t *testing.T, ns, name string) *vireoctlSession {
	t.Helper()
	cmd := exec.Command(filepath.Join(cluster.Options().BinDir, "vireoctl"), "--kubeconfig", cluster.Options().Kubeconfig(),
		"-n", ns, "console", name, "--timeout=5m", "--drain=3s")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &vireoctlSession{stdin: stdin, out: &lockedBuffer{}, errOut: &lockedBuffer{}, waited: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = s.out, s.errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.waited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	s.typeUntil42(t)
	return s
}

// typeUntil42 types until the guest answers 42 after what it answered before.
func (s *vireoctlSession) typeUntil42(t *testing.T) {
	t.Helper()
	typeUntil42(t, s.stdin, s.out, s.errOut, s.offset)
	s.offset = len(s.out.String())
}

// reconnected reports whether vireoctl said it reconnected.
func (s *vireoctlSession) reconnected() bool {
	return strings.Contains(s.errOut.String(), "Reconnected")
}

// close ends the session's input and waits for vireoctl to exit.
func (s *vireoctlSession) close(t *testing.T) {
	t.Helper()
	s.stdin.Close()
	select {
	case err := <-s.waited:
		if err != nil {
			t.Errorf("vireoctl console: %v\n%s", err, s.errOut.String())
		}
	case <-time.After(time.Minute):
		t.Errorf("vireoctl console did not exit after its input ended")
	}
}

// TestVireoctlConsoleReconnects: kube-apiserver restarts under an open vireoctl console; the
// session says the connection was lost, reconnects, and the guest answers again.
func TestVireoctlConsoleReconnects(t *testing.T) {
	ns := namespace(t)
	applyExample(t, ns, "vmi-tiny.yaml")
	waitPhase(t, ns, "tiny", v1.Running, 120*time.Second)
	s := startVireoctlConsole(t, ns, "tiny")

	if err := cluster.Restart(t.Context(), "kube-apiserver"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "vireoctl reconnected", func() error {
		if !s.reconnected() {
			return errString("stderr: " + s.errOut.String())
		}
		return nil
	})
	if !strings.Contains(s.errOut.String(), "connection was lost") {
		t.Errorf("vireoctl did not say the connection was lost: %s", s.errOut.String())
	}
	s.typeUntil42(t)
	s.close(t)
	waitVireoReachesKubeAPIServer(t, ns)
}

// waitVireoReachesKubeAPIServer waits until vireo-apiserver reaches kube-apiserver again
// through the kubernetes Service after kube-apiserver restarted: its admission looks each
// request's namespace up there, and until kube-proxy has the restarted endpoint back a create
// in Vireo's API fails ("dial tcp 10.96.0.1:443: connection refused"), in the next test too.
func waitVireoReachesKubeAPIServer(t *testing.T, ns string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repo, "artifacts", "examples", "vmi-tiny.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	probe := manifestFile(t, strings.Replace(string(b), "name: tiny", "name: tiny-admission-probe", 1))
	eventuallyWithin(t, "vireo-apiserver admitting a VMI after kube-apiserver's restart", 2*time.Minute, func() error {
		if _, errOut, err := kubectlResult("-n", ns, "create", "--dry-run=server", "-f", probe); err != nil {
			return fmt.Errorf("%v: %s", err, errOut)
		}
		return nil
	})
}

type errString string

func (e errString) Error() string { return string(e) }
