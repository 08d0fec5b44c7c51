package localcluster

import (
	"context"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

func TestDecide(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name        string
		st          State
		now         time.Time
		want        State
		wantRestart bool
	}{
		{"a crash long after its start restarts at once and resets the streak",
			State{StartedAt: t0, Streak: 4}, t0.Add(time.Minute),
			State{StartedAt: t0, DiedAt: t0.Add(time.Minute)}, true},
		{"a crash soon after its start counts in the streak and still restarts at once",
			State{StartedAt: t0, Streak: 2}, t0.Add(3 * time.Second),
			State{StartedAt: t0, Streak: 3, DiedAt: t0.Add(3 * time.Second)}, true},
		{"the fifth fast crash in a row still restarts at once",
			State{StartedAt: t0, Streak: 4}, t0.Add(time.Second),
			State{StartedAt: t0, Streak: 5, DiedAt: t0.Add(time.Second)}, true},
		{"the sixth fast crash in a row waits",
			State{StartedAt: t0, Streak: 5}, t0.Add(time.Second),
			State{StartedAt: t0, Streak: 6, DiedAt: t0.Add(time.Second)}, false},
		{"a crash just at the window's end is not fast",
			State{StartedAt: t0, Streak: 5}, t0.Add(CrashWindow),
			State{StartedAt: t0, DiedAt: t0.Add(CrashWindow)}, true},
		{"while backing off, a later check does not count the same crash again",
			State{StartedAt: t0, Streak: 6, DiedAt: t0.Add(time.Second)}, t0.Add(20 * time.Second),
			State{StartedAt: t0, Streak: 6, DiedAt: t0.Add(time.Second)}, false},
		{"the slow delay over, it restarts (and keeps trying)",
			State{StartedAt: t0, Streak: 9, DiedAt: t0.Add(time.Second)}, t0.Add(time.Second + SlowRestartDelay),
			State{StartedAt: t0, Streak: 9, DiedAt: t0.Add(time.Second)}, true},
		{"an unknown start time is not a fast crash",
			State{Streak: 7}, t0,
			State{DiedAt: t0}, true},
	}
	for _, c := range cases {
		got, restart := decide(c.st, c.now)
		if restart != c.wantRestart || got != c.want {
			t.Errorf("%s:\n got %+v, restart %v\nwant %+v, restart %v", c.name, got, restart, c.want, c.wantRestart)
		}
	}
}

func TestFormat(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		s    ComponentStatus
		want string
	}{
		{"running", ComponentStatus{Name: "etcd", Running: true, PID: 42, Wanted: true, StartedAt: now.Add(-95*time.Second - 400*time.Millisecond), Restarts: 2, LogFile: "/r/logs/etcd.log"},
			"etcd                     running  pid 42       up 1m35s     restarts 2   log /r/logs/etcd.log"},
		{"running for days", ComponentStatus{Name: "etcd", Running: true, PID: 42, StartedAt: now.Add(-50*time.Hour - 20*time.Minute), LogFile: "l"},
			"etcd                     running  pid 42       up 50h0m0s   restarts 0   log l"},
		{"running, start unknown", ComponentStatus{Name: "kube-scheduler", Running: true, PID: 7, LogFile: "l"},
			"kube-scheduler           running  pid 7        up ?         restarts 0   log l"},
		{"stopped by down", ComponentStatus{Name: "etcd", Restarts: 1, StartedAt: now.Add(-time.Hour), LogFile: "l"},
			"etcd                     stopped  pid -        up -         restarts 1   log l"},
		{"dead but wanted", ComponentStatus{Name: "vireo-local-0", Wanted: true, Restarts: 3, LogFile: "l"},
			"vireo-local-0            crashed  pid -        up -         restarts 3   log l"},
	}
	for _, c := range cases {
		if got := c.s.Format(now); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

func TestRoundUptime(t *testing.T) {
	cases := []struct{ in, want time.Duration }{
		{-time.Second, 0},
		{1400 * time.Millisecond, time.Second},
		{59*time.Minute + 59*time.Second + 600*time.Millisecond, time.Hour},
		{2*time.Hour + 10*time.Minute + 40*time.Second, 2*time.Hour + 11*time.Minute},
		{30*time.Hour + 29*time.Minute, 30 * time.Hour},
	}
	for _, c := range cases {
		if got := roundUptime(c.in); got != c.want {
			t.Errorf("roundUptime(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

// TestCheck runs the supervisor's check on a real process (sleep): a wanted dead process is
// restarted and counted, one not wanted is left alone, and so is one whose lock another holds.
func TestCheck(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep command")
	}
	c := New(Options{Layout: Layout{Root: t.TempDir()}})
	comp := Component{Name: "sleeper", Path: sleep, Args: []string{"300"}, Dir: &c.opts.Layout}
	t.Cleanup(func() { _ = comp.Stop(5 * time.Second) })
	if err := comp.Start(); err != nil {
		t.Fatal(err)
	}
	started := time.Now().Add(-time.Minute)
	if err := comp.saveState(State{Wanted: true, StartedAt: started}); err != nil {
		t.Fatal(err)
	}
	pid := kill(t, comp)

	// Another holds the lock (a deliberate Restart): no restart.
	unlock, ok, err := comp.lock(false)
	if err != nil || !ok {
		t.Fatalf("lock: %v %v", ok, err)
	}
	c.check(comp, time.Now())
	if _, alive := comp.PID(); alive {
		t.Fatal("restarted while another held the lock")
	}
	unlock()

	c.check(comp, time.Now())
	newPID, alive := comp.PID()
	st, err := comp.LoadState()
	if err != nil || !alive || newPID == pid || st.Restarts != 1 || !st.StartedAt.After(started) || !st.DiedAt.IsZero() {
		t.Fatalf("after check: pid %d (was %d) alive %v, state %+v (err %v); want a new process and 1 restart", newPID, pid, alive, st, err)
	}
	if log := comp.LogTail(5); !strings.Contains(log, "starting "+sleep) {
		t.Errorf("component log does not show the restart:\n%s", log)
	}

	// Down clears Wanted: a dead process stays dead.
	if err := c.stop(comp, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	c.check(comp, time.Now())
	if _, alive := comp.PID(); alive {
		t.Fatal("restarted a component that is not wanted")
	}
}

// kill kills comp's process with SIGKILL and waits until it is gone.
func kill(t *testing.T, comp Component) int {
	t.Helper()
	pid, ok := comp.PID()
	if !ok {
		t.Fatal("not running")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		_, alive := comp.PID()
		return !alive, nil
	})
	if err != nil {
		t.Fatalf("pid %d still alive after SIGKILL", pid)
	}
	return pid
}
