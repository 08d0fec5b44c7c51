package e2e

import (
	"bytes"
	"context"
	"io"
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

// TestVireoctlConsoleReconnects: kube-apiserver restarts under an open vireoctl console; the
// session says the connection was lost, reconnects, and the guest answers again.
func TestVireoctlConsoleReconnects(t *testing.T) {
	ns := namespace(t)
	applyExample(t, ns, "vmi-tiny.yaml")
	waitPhase(t, ns, "tiny", v1.Running, 120*time.Second)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(cluster.Options().BinDir, "vireoctl"), "--kubeconfig", cluster.Options().Kubeconfig(),
		"-n", ns, "console", "tiny", "--timeout=2m", "--drain=3s")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	typeUntil42(t, stdin, &out, &errOut, 0)

	if err := cluster.Restart(t.Context(), "kube-apiserver"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "vireoctl reconnected", func() error {
		if !strings.Contains(errOut.String(), "Reconnected") {
			return errString("stderr: " + errOut.String())
		}
		return nil
	})
	if !strings.Contains(errOut.String(), "connection was lost") {
		t.Errorf("vireoctl did not say the connection was lost: %s", errOut.String())
	}
	typeUntil42(t, stdin, &out, &errOut, len(out.String()))
	stdin.Close()
	select {
	case err := <-waited:
		if err != nil {
			t.Errorf("vireoctl console: %v\n%s", err, errOut.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("vireoctl console did not exit after its input ended")
	}
}

type errString string

func (e errString) Error() string { return string(e) }
