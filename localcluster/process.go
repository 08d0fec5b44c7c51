// Package localcluster runs Vireo on one machine as separate processes, with their
// certificates, kubeconfig, pid files and logs under one directory (_output/local).
// It is a consumer like any user: nothing in the product imports it.
package localcluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Component is one process of the installation.
type Component struct {
	Name string
	Path string
	Args []string
	Dir  *Layout
	// Netns, when set, runs the process inside that network namespace.
	Netns string
	// Mntns, when set, is a file holding a mount namespace the process also runs in (a
	// kubelet node's: see MountNamespace).
	Mntns string
	// Ready reports nil once the component serves; nil Ready means "process alive".
	Ready func(ctx context.Context) error
	// StopGrace, when set and shorter than the caller's, is how long Stop waits after SIGTERM
	// before SIGKILL.
	StopGrace time.Duration
}

// LogFile is where the component's output goes.
func (c Component) LogFile() string { return filepath.Join(c.Dir.Logs(), c.Name+".log") }

// PIDFile records the running component's process id.
func (c Component) PIDFile() string { return filepath.Join(c.Dir.Run(), c.Name+".pid") }

// Start launches the component in its own session, detached from the caller, so it
// keeps running after `vireo-local up` returns.
func (c Component) Start() error {
	for _, d := range []string{c.Dir.Logs(), c.Dir.Run()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	log, err := os.OpenFile(c.LogFile(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	fmt.Fprintf(log, "\n==== %s starting %s %s\n", time.Now().Format(time.RFC3339), c.Path, strings.Join(c.Args, " "))
	cmd := exec.Command(c.Path, c.Args...)
	if c.Netns != "" {
		// nsenter enters the network namespace only and execs the binary in the same
		// process; `ip netns exec` would also give it a private mount namespace, hiding the
		// network namespaces a local node creates for its Pods from the host.
		enter := []string{"--net=/run/netns/" + c.Netns}
		if c.Mntns != "" {
			enter = append(enter, "--mount="+c.Mntns)
		}
		cmd = exec.Command("nsenter", append(append(enter, "--", c.Path), c.Args...)...)
	}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s (%s): %w", c.Name, c.Path, err)
	}
	pid := cmd.Process.Pid
	// Reap the process if it exits while we live (tests restart components); once we
	// exit, init adopts it.
	go func() { _ = cmd.Wait() }()
	return os.WriteFile(c.PIDFile(), []byte(strconv.Itoa(pid)+"\n"), 0o644)
}

// PID returns the recorded process id if that process is still alive.
func (c Component) PID() (int, bool) {
	b, err := os.ReadFile(c.PIDFile())
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, false
	}
	if syscall.Kill(pid, 0) != nil {
		return 0, false
	}
	// A recycled pid would belong to another program: check the executable name.
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return 0, false
	}
	switch filepath.Base(strings.TrimSuffix(exe, " (deleted)")) {
	case filepath.Base(c.Path):
		return pid, true
	case "nsenter", "ip":
		// Still entering the network namespace, before exec'ing the binary.
		return pid, c.Netns != ""
	}
	return 0, false
}

// Stop sends SIGTERM, waits up to grace for the process to exit, then kills it.
func (c Component) Stop(grace time.Duration) error {
	pid, ok := c.PID()
	if !ok {
		_ = os.Remove(c.PIDFile())
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stopping %s (pid %d): %w", c.Name, pid, err)
	}
	if c.StopGrace > 0 && c.StopGrace < grace {
		grace = c.StopGrace
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if _, alive := c.PID(); !alive {
			return os.Remove(c.PIDFile())
		}
		time.Sleep(100 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	return os.Remove(c.PIDFile())
}

// LogTail returns the last n lines of the component's log, for error reports.
func (c Component) LogTail(n int) string {
	f, err := os.Open(c.LogFile())
	if err != nil {
		return ""
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}
