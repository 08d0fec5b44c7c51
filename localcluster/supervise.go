package localcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/klog/v2"
)

// Supervision timing: the supervisor checks every CheckInterval and restarts a dead component
// at once, unless it crashed more than MaxFastCrashes times in a row, each within CrashWindow
// of its start; then it waits SlowRestartDelay between attempts (and keeps trying).
const (
	CheckInterval    = time.Second
	CrashWindow      = 10 * time.Second
	MaxFastCrashes   = 5
	SlowRestartDelay = 30 * time.Second
)

// SupervisorName is the supervisor's component name (its pid file, state and log).
const SupervisorName = "supervisor"

// Supervisor is the `vireo-local supervise` process Up starts last and Down stops first. It
// is not one of Components: it watches them.
func (c *Cluster) Supervisor() Component {
	l := &c.opts.Layout
	comp := Component{Name: SupervisorName, Path: c.abs(l.Bin("vireo-local")), Dir: l, Args: []string{
		"supervise",
		"--root", c.abs(l.Root),
		"--bin-dir", c.abs(l.BinDir),
		"--manifests", c.abs(c.opts.ManifestsDir),
	}}
	comp.Ready = func(context.Context) error {
		pid, ok := comp.PID()
		b, err := os.ReadFile(c.supervisorReadyFile())
		if !ok || err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(pid) {
			return fmt.Errorf("the supervisor has not completed its first check yet")
		}
		return nil
	}
	return comp
}

// supervisorReadyFile holds the pid of the supervisor once it has checked every component.
func (c *Cluster) supervisorReadyFile() string {
	return filepath.Join(c.opts.Run(), SupervisorName+".ready")
}

// Supervise restarts, every CheckInterval until ctx ends, each component Up started (see
// State.Wanted) whose process died. Components() is evaluated on every check, so the
// supervised set follows the installation's definition.
func (c *Cluster) Supervise(ctx context.Context) error {
	klog.InfoS("supervising", "root", c.abs(c.opts.Root), "interval", CheckInterval)
	ticker := time.NewTicker(CheckInterval)
	defer ticker.Stop()
	go openHostPathVolumes(ctx)
	for first := true; ; first = false {
		for _, comp := range c.Components() {
			c.check(comp, time.Now())
		}
		if first {
			if err := os.WriteFile(c.supervisorReadyFile(), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			klog.InfoS("supervisor stopping")
			return nil
		case <-ticker.C:
		}
	}
}

// check restarts comp if it is wanted, dead and its back-off allows. It skips a component
// whose lock another holds: Restart, Up or Down is stopping or starting it deliberately.
func (c *Cluster) check(comp Component, now time.Time) {
	unlock, ok, err := comp.lock(false)
	if err != nil {
		klog.ErrorS(err, "cannot lock", "component", comp.Name)
		return
	}
	if !ok {
		return
	}
	defer unlock()
	st, err := comp.LoadState()
	if err != nil {
		klog.ErrorS(err, "cannot read state", "component", comp.Name)
		return
	}
	if !st.Wanted {
		return
	}
	if _, alive := comp.PID(); alive {
		if !st.DiedAt.IsZero() { // restarted by someone else meanwhile
			st.DiedAt = time.Time{}
			c.save(comp, st)
		}
		return
	}
	first := st.DiedAt.IsZero()
	next, restart := decide(st, now)
	if !restart {
		if first {
			klog.InfoS("component died; crashing repeatedly, so restarting it later", "component", comp.Name,
				"crashesInARow", next.Streak, "retryIn", SlowRestartDelay, "log", comp.LogFile())
			c.save(comp, next)
		}
		return
	}
	if err := comp.Start(); err != nil {
		klog.ErrorS(err, "restart failed; retrying", "component", comp.Name)
		c.save(comp, next)
		return
	}
	ranFor := st.uptimeAt(next.DiedAt)
	next.Restarts++
	next.StartedAt, next.DiedAt = now, time.Time{}
	pid, _ := comp.PID()
	klog.InfoS("restarted component", "component", comp.Name, "pid", pid, "restarts", next.Restarts,
		"ranFor", ranFor, "crashesInARow", next.Streak, "log", comp.LogFile())
	c.save(comp, next)
}

func (c *Cluster) save(comp Component, st State) {
	if err := comp.saveState(st); err != nil {
		klog.ErrorS(err, "cannot write state", "component", comp.Name)
	}
}

// decide is the back-off: given the state of a wanted component found dead at now, it
// returns the updated state and whether to start it now. On first finding it dead it
// records when, and counts the crash in Streak if it came within CrashWindow of the start
// (else the streak starts over). Up to MaxFastCrashes in a row restart at once; beyond,
// it waits SlowRestartDelay after the death.
func decide(st State, now time.Time) (State, bool) {
	if st.DiedAt.IsZero() {
		st.DiedAt = now
		if !st.StartedAt.IsZero() && now.Sub(st.StartedAt) < CrashWindow {
			st.Streak++
		} else {
			st.Streak = 0
		}
	}
	if st.Streak > MaxFastCrashes && now.Sub(st.DiedAt) < SlowRestartDelay {
		return st, false
	}
	return st, true
}

// uptimeAt is how long the process had run at t (zero when unknown).
func (st State) uptimeAt(t time.Time) time.Duration {
	if st.StartedAt.IsZero() || t.Before(st.StartedAt) {
		return 0
	}
	return roundUptime(t.Sub(st.StartedAt))
}
