package localcluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// State is what the run directory remembers of a component (<root>/run/<name>.json) for the
// supervisor and `vireo-local status`: whether it should run, since when, and how often the
// supervisor restarted it.
type State struct {
	// Wanted is set once Up started the component and cleared when Down stops it: the
	// supervisor restarts a component only while it is wanted.
	Wanted bool `json:"wanted"`
	// StartedAt is when the running process was started (by Up, Restart or the supervisor).
	StartedAt time.Time `json:"startedAt,omitzero"`
	// Restarts counts the supervisor's restarts since Up started the component; a
	// deliberate Restart does not count.
	Restarts int `json:"restarts"`
	// Streak counts the crashes in a row that came within CrashWindow of their start.
	Streak int `json:"streak,omitempty"`
	// DiedAt is when the supervisor first found the current process dead (zero while it runs).
	DiedAt time.Time `json:"diedAt,omitzero"`
}

// StateFile is where the component's State is kept.
func (c Component) StateFile() string { return filepath.Join(c.Dir.Run(), c.Name+".json") }

func (c Component) lockFile() string { return filepath.Join(c.Dir.Run(), c.Name+".lock") }

// LoadState reads the component's State; a component never started has the zero State.
func (c Component) LoadState() (State, error) {
	var st State
	b, err := os.ReadFile(c.StateFile())
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("reading %s: %w (delete it; the next up rewrites it)", c.StateFile(), err)
	}
	return st, nil
}

// saveState writes st atomically (rename), so a reader never sees half a file.
func (c Component) saveState(st State) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.Dir.Run(), 0o755); err != nil {
		return err
	}
	tmp := c.StateFile() + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, c.StateFile())
}

// lock takes the component's lock: whoever holds it (Up, Restart, Down or the supervisor)
// is the only one stopping or starting the component. It is an flock, so the kernel
// releases it when its holder dies; the descriptor is close-on-exec, so the component's
// process does not inherit it. With block false it returns ok false when another holds it.
func (c Component) lock(block bool) (unlock func(), ok bool, err error) {
	if err := os.MkdirAll(c.Dir.Run(), 0o755); err != nil {
		return nil, false, err
	}
	f, err := os.OpenFile(c.lockFile(), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, false, err
	}
	how := syscall.LOCK_EX
	if !block {
		how |= syscall.LOCK_NB
	}
	for {
		err = syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("locking %s: %w", c.lockFile(), err)
	}
	return func() { f.Close() }, true, nil
}

// withLock runs fn holding the component's lock, waiting for it.
func (c Component) withLock(fn func() error) error {
	unlock, _, err := c.lock(true)
	if err != nil {
		return err
	}
	defer unlock()
	return fn()
}

// recorded is what Up remembers of its options for the supervisor, which must name the
// same components (network namespaces, ports, images) as the Up that started them, and for
// tests and examples, which read the registry's address here (jq -r .registry
// <root>/run/installation.json).
type recorded struct {
	Network Network `json:"network"`
	Ports   Ports   `json:"ports"`
	// Images is the guest images' directory the registry serves (absolute).
	Images string `json:"images,omitempty"`
	// Registry is the OCI registry's address (host:port, plain HTTP).
	Registry string `json:"registry,omitempty"`
	// NodeRuntime is "kubelet" (nodeRuntime); empty in installations of vireo-local's own node.
	NodeRuntime string `json:"nodeRuntime,omitempty"`
	// HA is set for an installation made with Options.HA.
	HA bool `json:"ha,omitempty"`
}

func (l Layout) recordedFile() string { return filepath.Join(l.Run(), "installation.json") }

// recordOptions remembers the network, ports and images for LoadRecordedOptions.
func (c *Cluster) recordOptions() error {
	ports := c.opts.Ports
	ports.Registry = ports.RegistryPort()
	b, err := json.Marshal(recorded{Network: c.opts.Network, Ports: ports,
		Images: c.abs(c.opts.ImagesDir()), Registry: c.RegistryAddress(), NodeRuntime: nodeRuntime, HA: c.opts.HA})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.opts.Run(), 0o755); err != nil {
		return err
	}
	return os.WriteFile(c.opts.recordedFile(), append(b, '\n'), 0o644)
}

// readRecorded returns what the last Up under l.Root recorded; an error wrapping
// fs.ErrNotExist when no Up did.
func readRecorded(l Layout) (recorded, error) {
	var r recorded
	b, err := os.ReadFile(l.recordedFile())
	if err != nil {
		return r, fmt.Errorf("no installation under %s (%w); run `vireo-local up` first", l.Root, err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("reading %s: %w", l.recordedFile(), err)
	}
	return r, nil
}

// checkNodeRuntime refuses an installation made before the local nodes were kubelets: its
// Pods and state belong to vireo-local's own node, which is gone.
func (c *Cluster) checkNodeRuntime() error {
	r, err := readRecorded(c.opts.Layout)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil // a new installation
	case err != nil:
		return err
	case r.NodeRuntime != nodeRuntime:
		return fmt.Errorf("the installation under %s runs vireo-local's own node, which this version no longer has "+
			"(local nodes are kubelets now); start afresh: vireo-local down --purge (deletes its data), then up", c.opts.Root)
	}
	return nil
}

// LoadRecordedOptions returns opts with the network, ports and images directory the last Up
// under opts.Root used (an installation made in a test or by a program need not use the
// defaults).
func LoadRecordedOptions(opts Options) (Options, error) {
	r, err := readRecorded(opts.Layout)
	if err != nil {
		return opts, err
	}
	opts.Network, opts.Ports, opts.HA = r.Network, r.Ports, r.HA
	if r.Images != "" {
		opts.Images = r.Images
	}
	return opts, nil
}

// InstalledHA reports whether the installation under l.Root was made with Options.HA (false
// when there is none).
func InstalledHA(l Layout) bool {
	r, err := readRecorded(l)
	return err == nil && r.HA
}

// checkHAMode refuses to change an installation's mode: Vireo's objects are in vireo-apiserver's
// embedded etcd without HA and in the host's vireo-etcd members with it, and neither is moved
// into the other.
func (c *Cluster) checkHAMode() error {
	r, err := readRecorded(c.opts.Layout)
	if err != nil || r.HA == c.opts.HA {
		return nil // a new installation, or one readRecorded's callers report on
	}
	made, asked := "without --ha (Vireo's objects are in vireo-apiserver's embedded etcd)", "with --ha"
	if r.HA {
		made, asked = "with --ha (Vireo's objects are in the host's vireo-etcd members)", "without --ha"
	}
	return fmt.Errorf("the installation under %s was made %s and cannot be changed to run %s: "+
		"keep its mode, or start afresh with vireo-local down --purge (deletes its data), then up", c.opts.Root, made, asked)
}
