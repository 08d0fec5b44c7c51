package virt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sys/unix"
)

// DefaultBinary is the libvirtd StartDaemon runs when DaemonConfig.Binary is empty.
const DefaultBinary = "/usr/sbin/libvirtd"

// ErrDaemonStopped is reported by Daemon.Err and Daemon.Connect after Daemon.Stop.
var ErrDaemonStopped = errors.New("libvirtd was stopped by its launcher (Daemon.Stop); start a new daemon")

// DaemonConfig says how to run a launcher's session-mode libvirtd.
type DaemonConfig struct {
	// Dir is the daemon's private base directory (an emptyDir such as
	// /var/run/vireo-private). XDG_RUNTIME_DIR, XDG_CONFIG_HOME, XDG_CACHE_HOME,
	// XDG_DATA_HOME and HOME live under it (see Layout); it must be short enough for the
	// sockets libvirt and QEMU bind there (MaxSocketPath).
	Dir string
	// Binary is the libvirtd executable; DefaultBinary when empty.
	Binary string
	// HostUUID is libvirt's host_uuid, unique per launcher: migration between two
	// launchers of one VMI is refused when both report the same host. A random UUID when
	// empty.
	HostUUID string
	// Log receives libvirtd's output prefixed "libvirtd: " and QEMU's log lines prefixed
	// "qemu[<domain>]: ". Discarded when nil.
	Log io.Writer
	// Credential runs libvirtd as another user. Only for a root caller (tests, or a launcher
	// that drops privileges); Dir is then handed to that user. libvirtd must not run as
	// root: as root it ignores the XDG directories and becomes the system daemon.
	Credential *syscall.Credential
	// StartTimeout bounds the wait for libvirtd's socket when StartDaemon's context has no
	// deadline. 30 s when zero.
	StartTimeout time.Duration
	// StopTimeout is how long Stop waits for libvirtd to exit after SIGTERM before it
	// kills it. 10 s when zero.
	StopTimeout time.Duration
	// CapabilitiesSeed is a directory of QEMU capabilities libvirt probed earlier on this
	// node (package capsseed), copied into the daemon's cache before it starts so that its
	// first domain need not probe QEMU again. None when empty or missing.
	CapabilitiesSeed string
}

// Daemon is a session-mode libvirtd owned and supervised by the launcher.
type Daemon struct {
	cfg      DaemonConfig
	layout   Layout
	hostUUID string
	cmd      *exec.Cmd
	sink     *logSink
	output   *ring
	copied   chan struct{}
	tailer   *logTailer
	ready    time.Duration

	done chan struct{}

	mu       sync.Mutex
	stopping bool
	exitErr  error

	stopMu  sync.Mutex
	stopped bool
}

// ExitError reports that libvirtd exited without being asked to.
type ExitError struct {
	// Pid was libvirtd's process id.
	Pid int
	// Status says how it ended, e.g. "killed by signal 9 (SIGKILL)" or "exit status 1".
	Status string
	// LastLines are the last lines libvirtd wrote to stderr.
	LastLines []string
}

func (e *ExitError) Error() string {
	s := fmt.Sprintf("libvirtd (pid %d) exited unexpectedly: %s", e.Pid, e.Status)
	if len(e.LastLines) > 0 {
		s += "; its last log lines: " + strings.Join(e.LastLines, " | ")
	}
	return s
}

// StartDaemon writes libvirtd.conf and qemu.conf under cfg.Dir, starts libvirtd in session
// mode, waits (polling, bounded by ctx or cfg.StartTimeout) until its socket accepts
// connections and then supervises it: Done is closed when libvirtd exits, and Err says
// why. ctx bounds only the start; the daemon runs until Stop.
func StartDaemon(ctx context.Context, cfg DaemonConfig) (*Daemon, error) {
	cfg, hostUUID, err := completeConfig(cfg)
	if err != nil {
		return nil, err
	}
	layout := NewLayout(cfg.Dir)
	if err := layout.check(); err != nil {
		return nil, err
	}
	if err := checkRunUser(cfg.Credential); err != nil {
		return nil, err
	}
	if err := clearStaleSockets(layout); err != nil {
		return nil, err
	}
	if err := prepareDirs(layout, hostUUID, cfg.Credential); err != nil {
		return nil, err
	}
	if err := seedCapabilities(layout, cfg.CapabilitiesSeed, cfg.Credential); err != nil {
		return nil, err
	}
	d := &Daemon{cfg: cfg, layout: layout, hostUUID: hostUUID, sink: &logSink{w: cfg.Log},
		output: &ring{max: 20}, copied: make(chan struct{}), done: make(chan struct{})}
	began := time.Now()
	if err := d.start(); err != nil {
		return nil, err
	}
	d.tailer = startLogTailer(layout.QEMULogDir, d.sink, 500*time.Millisecond)
	if err := d.waitReady(ctx); err != nil {
		stopCtx, cancel := context.WithTimeout(context.Background(), cfg.StopTimeout+10*time.Second)
		defer cancel()
		return nil, errors.Join(err, d.Stop(stopCtx))
	}
	d.ready = time.Since(began)
	return d, nil
}

func completeConfig(cfg DaemonConfig) (DaemonConfig, string, error) {
	if cfg.Dir == "" {
		return cfg, "", errors.New("virt: DaemonConfig.Dir is empty; give the daemon a private directory")
	}
	if cfg.Binary == "" {
		cfg.Binary = DefaultBinary
	}
	if _, err := exec.LookPath(cfg.Binary); err != nil {
		return cfg, "", fmt.Errorf("virt: libvirtd binary: %w (install libvirt-daemon)", err)
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 30 * time.Second
	}
	if cfg.StopTimeout <= 0 {
		cfg.StopTimeout = 10 * time.Second
	}
	hostUUID := cfg.HostUUID
	if hostUUID == "" {
		return cfg, uuid.NewString(), nil
	}
	u, err := uuid.Parse(hostUUID)
	if err != nil {
		return cfg, "", fmt.Errorf("virt: DaemonConfig.HostUUID %q: %w", hostUUID, err)
	}
	return cfg, u.String(), nil
}

// checkRunUser refuses to run libvirtd as root and checks that its user has a passwd entry:
// libvirt looks it up to start QEMU ("Failed to find user record for uid '107'").
func checkRunUser(cred *syscall.Credential) error {
	uid := os.Geteuid()
	if cred != nil {
		uid = int(cred.Uid)
	}
	if uid == 0 {
		return errors.New("virt: libvirtd would run as root, where it is the system daemon and ignores the launcher's directories; run the launcher unprivileged or set DaemonConfig.Credential")
	}
	if _, err := user.LookupId(strconv.Itoa(uid)); err != nil {
		var unknown user.UnknownUserIdError
		if errors.As(err, &unknown) {
			return fmt.Errorf("virt: uid %d has no passwd entry, and libvirtd cannot start QEMU without one (\"Failed to find user record for uid '%d'\"); add it to /etc/passwd (hack/install-deps.sh creates user qemu, 107)", uid, uid)
		}
		return fmt.Errorf("virt: look up uid %d: %w", uid, err)
	}
	return nil
}

// clearStaleSockets removes sockets a killed daemon left behind, and refuses to start a
// second daemon on a directory whose daemon still answers.
func clearStaleSockets(l Layout) error {
	for _, p := range []string{l.Socket, l.AdminSocket} {
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		if c, err := net.DialTimeout("unix", p, time.Second); err == nil {
			_ = c.Close()
			return fmt.Errorf("virt: a libvirtd already serves %s; stop it or use another directory", p)
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("virt: remove stale socket: %w", err)
		}
	}
	return nil
}

func (d *Daemon) start() error {
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("virt: pipe for libvirtd output: %w", err)
	}
	cmd := exec.Command(d.cfg.Binary, "--config", d.layout.LibvirtdConf())
	cmd.Dir = d.layout.HomeDir
	cmd.Env = d.layout.env()
	cmd.Stdout, cmd.Stderr = w, w
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid:    true,
		Pdeathsig:  syscall.SIGKILL, // a dead launcher must not leave its libvirtd behind
		Credential: d.cfg.Credential,
	}
	if err := cmd.Start(); err != nil {
		_ = r.Close()
		_ = w.Close()
		return fmt.Errorf("virt: start libvirtd: %w", err)
	}
	_ = w.Close()
	d.cmd = cmd
	go func() {
		copyLines(r, d.sink, "libvirtd: ", d.output)
		_ = r.Close()
		close(d.copied)
	}()
	go d.supervise()
	return nil
}

func (d *Daemon) supervise() {
	_ = d.cmd.Wait()
	// Let the output copier catch libvirtd's last words (bounded: a descendant could hold
	// the pipe open).
	select {
	case <-d.copied:
	case <-time.After(time.Second):
	}
	d.mu.Lock()
	if d.stopping {
		d.exitErr = ErrDaemonStopped
	} else {
		d.exitErr = &ExitError{Pid: d.cmd.Process.Pid, Status: describeExit(d.cmd.ProcessState),
			LastLines: tailNonEmpty(d.output.last(), 5)}
	}
	err := d.exitErr
	d.mu.Unlock()
	if err != ErrDaemonStopped {
		d.sink.line("virt: ", err.Error())
	}
	close(d.done)
}

// describeExit says how a process ended, naming the signal that killed it.
func describeExit(ps *os.ProcessState) string {
	if ps == nil {
		return "unknown exit status"
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("killed by signal %d (%s)", int(ws.Signal()), unix.SignalName(ws.Signal()))
	}
	return fmt.Sprintf("exit status %d", ps.ExitCode())
}

func (d *Daemon) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, d.cfg.StartTimeout)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if d.answers(ctx) {
			return nil
		}
		select {
		case <-d.done:
			return fmt.Errorf("virt: libvirtd exited before its socket %s appeared: %w", d.layout.Socket, d.Err())
		case <-ctx.Done():
			return fmt.Errorf("virt: libvirtd socket %s did not appear: %w; last output: %s",
				d.layout.Socket, ctx.Err(), strings.Join(tailNonEmpty(d.output.last(), 5), " | "))
		case <-tick.C:
		}
	}
}

// answers reports whether libvirtd completes a connection handshake: what a client needs,
// and unlike a bare dial it leaves no "End of file while reading data" error in its log.
func (d *Daemon) answers(ctx context.Context) bool {
	if _, err := os.Stat(d.layout.Socket); err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, err := connect(ctx, d)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}

// Done is closed when libvirtd has exited, whether by Stop or unexpectedly.
func (d *Daemon) Done() <-chan struct{} { return d.done }

// Err is nil while libvirtd runs; after it exited, ErrDaemonStopped when Stop ended it and
// an *ExitError with the exit status when it died on its own.
func (d *Daemon) Err() error {
	select {
	case <-d.done:
	default:
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.exitErr
}

// Pid is libvirtd's process id.
func (d *Daemon) Pid() int { return d.cmd.Process.Pid }

// Layout says where the daemon keeps its sockets, logs and pid files.
func (d *Daemon) Layout() Layout { return d.layout }

// HostUUID is the host_uuid the daemon reports.
func (d *Daemon) HostUUID() string { return d.hostUUID }

// StartupDuration is how long libvirtd took from exec to an accepting socket.
func (d *Daemon) StartupDuration() time.Duration { return d.ready }

// QEMUPid returns the pid of the QEMU process running domain name.
func (d *Daemon) QEMUPid(name string) (int, error) { return d.layout.QEMUPid(name) }

// Connect opens a go-libvirt connection (qemu:///session) to the daemon.
func (d *Daemon) Connect(ctx context.Context) (*Conn, error) {
	if err := d.Err(); err != nil {
		return nil, fmt.Errorf("virt: connect to libvirtd in %s: %w", d.layout.Dir, err)
	}
	d.mu.Lock()
	stopping := d.stopping
	d.mu.Unlock()
	if stopping {
		return nil, fmt.Errorf("virt: connect to libvirtd in %s: %w", d.layout.Dir, ErrDaemonStopped)
	}
	return connect(ctx, d)
}

// Stop destroys the daemon's running domains, asks libvirtd to exit (SIGTERM), kills it
// after DaemonConfig.StopTimeout, kills any QEMU it left behind and removes its sockets.
// It returns when no process of the daemon is left, or ctx ends. Stop is idempotent; it
// also cleans up after a daemon that died on its own.
func (d *Daemon) Stop(ctx context.Context) error {
	d.stopMu.Lock()
	defer d.stopMu.Unlock()
	if d.stopped {
		return nil
	}
	d.mu.Lock()
	d.stopping = true
	d.mu.Unlock()
	var errs []error
	if d.Err() == nil {
		if err := d.destroyDomains(ctx); err != nil {
			d.sink.line("virt: ", "stop: "+err.Error())
		}
		errs = append(errs, d.terminate(ctx))
	}
	errs = append(errs, killQEMUs(ctx, d.layout))
	for _, p := range []string{d.layout.Socket, d.layout.AdminSocket} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("virt: remove socket: %w", err))
		}
	}
	d.tailer.close()
	err := errors.Join(errs...)
	d.stopped = err == nil
	return err
}

// destroyDomains destroys every running domain through libvirt, so libvirt cleans up after
// them as after any destroy.
func (d *Daemon) destroyDomains(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	c, err := connect(ctx, d)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.destroyAll(ctx)
}

// terminate sends SIGTERM, then SIGKILL to libvirtd's process group, and waits for its exit.
func (d *Daemon) terminate(ctx context.Context) error {
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	grace := time.NewTimer(d.cfg.StopTimeout)
	defer grace.Stop()
	select {
	case <-d.done:
		return nil
	case <-grace.C:
	case <-ctx.Done():
	}
	_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
	_ = d.cmd.Process.Kill()
	select {
	case <-d.done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("virt: libvirtd (pid %d) survived SIGKILL for 10 s", d.cmd.Process.Pid)
	}
}
