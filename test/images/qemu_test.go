package images

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"
)

// vm is a QEMU process under test: TCG, its serial port on the process's stdin and stdout,
// and a QMP socket.
type vm struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin io.WriteCloser
	qmp   string // the QMP socket's path

	mu      sync.Mutex
	serial  bytes.Buffer
	updated chan struct{} // signalled after each read of the serial port
	exited  chan struct{} // closed once the process has exited
	waitErr error
}

// startVM starts qemu-system-x86_64 with TCG, 128 MiB and no display, plus args; the test's
// cleanup kills it if it still runs.
func startVM(t *testing.T, args ...string) *vm {
	t.Helper()
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		t.Fatalf("qemu-system-x86_64 not found (Debian package qemu-system-x86): run hack/install-deps.sh")
	}
	// A short directory: a unix socket's path is limited to 108 bytes.
	dir, err := os.MkdirTemp("", "vireo-vm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	v := &vm{t: t, qmp: filepath.Join(dir, "qmp.sock"), updated: make(chan struct{}, 1), exited: make(chan struct{})}
	base := []string{"-accel", "tcg", "-m", "128", "-display", "none", "-vga", "std", "-no-user-config",
		"-serial", "stdio", "-monitor", "none", "-qmp", "unix:" + v.qmp + ",server=on,wait=off"}
	v.cmd = exec.Command("qemu-system-x86_64", append(base, args...)...)
	v.cmd.Stderr = os.Stderr
	if v.stdin, err = v.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := v.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := v.cmd.Start(); err != nil {
		t.Fatalf("starting QEMU: %v", err)
	}
	go v.readSerial(stdout)
	t.Cleanup(func() {
		select {
		case <-v.exited:
		default:
			_ = v.cmd.Process.Kill()
			<-v.exited
		}
		if t.Failed() {
			t.Logf("serial console:\n%s", v.output())
		}
	})
	return v
}

func (v *vm) readSerial(r io.Reader) {
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			v.mu.Lock()
			v.serial.Write(buf[:n])
			v.mu.Unlock()
			v.notify()
		}
		if err != nil {
			break
		}
	}
	v.waitErr = v.cmd.Wait()
	close(v.exited)
}

func (v *vm) notify() {
	select {
	case v.updated <- struct{}{}:
	default:
	}
}

func (v *vm) output() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.serial.String()
}

// waitFor waits until the serial output from offset on matches re, and returns the offset
// just past the match. It fails the test at the deadline or if QEMU exits first.
func (v *vm) waitFor(re *regexp.Regexp, from int, timeout time.Duration) int {
	v.t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		out := v.output()
		if from > len(out) {
			from = len(out)
		}
		if loc := re.FindStringIndex(out[from:]); loc != nil {
			return from + loc[1]
		}
		select {
		case <-v.updated:
		case <-v.exited:
			if loc := re.FindStringIndex(v.output()[from:]); loc != nil {
				return from + loc[1]
			}
			v.t.Fatalf("QEMU exited (%v) before the serial console showed %q", v.waitErr, re)
		case <-deadline.C:
			v.t.Fatalf("the serial console did not show %q within %s", re, timeout)
		}
	}
}

// typeLine types a line on the serial console.
func (v *vm) typeLine(line string) {
	v.t.Helper()
	if _, err := io.WriteString(v.stdin, line+"\n"); err != nil {
		v.t.Fatalf("typing on the serial console: %v", err)
	}
}

// waitExit waits until QEMU exits by itself and returns its exit error.
func (v *vm) waitExit(timeout time.Duration) error {
	v.t.Helper()
	select {
	case <-v.exited:
		return v.waitErr
	case <-time.After(timeout):
		v.t.Fatalf("QEMU did not exit within %s", timeout)
		return nil
	}
}

// qmpCommand runs one QMP command on a fresh connection (after the capabilities
// handshake) and returns its "return" value.
func (v *vm) qmpCommand(command string, args any) (json.RawMessage, error) {
	conn, err := net.DialTimeout("unix", v.qmp, 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	dec := json.NewDecoder(bufio.NewReader(conn))
	var greeting map[string]json.RawMessage
	if err := dec.Decode(&greeting); err != nil {
		return nil, fmt.Errorf("QMP greeting: %w", err)
	}
	call := func(cmd string, args any) (json.RawMessage, error) {
		req := map[string]any{"execute": cmd}
		if args != nil {
			req["arguments"] = args
		}
		if err := json.NewEncoder(conn).Encode(req); err != nil {
			return nil, err
		}
		for { // skip asynchronous events
			var resp struct {
				Return json.RawMessage `json:"return"`
				Error  *struct {
					Class, Desc string
				} `json:"error"`
				Event string `json:"event"`
			}
			if err := dec.Decode(&resp); err != nil {
				return nil, fmt.Errorf("QMP %s: %w", cmd, err)
			}
			if resp.Event != "" {
				continue
			}
			if resp.Error != nil {
				return nil, fmt.Errorf("QMP %s: %s: %s", cmd, resp.Error.Class, resp.Error.Desc)
			}
			return resp.Return, nil
		}
	}
	if _, err := call("qmp_capabilities", nil); err != nil {
		return nil, err
	}
	return call(command, args)
}
