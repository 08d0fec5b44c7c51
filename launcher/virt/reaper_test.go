package virt

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	o, ppid, zombie := parseStat(42, []byte("42 (qemu-system-x86) Z 7 42 42 0 -1 4194560 0"))
	if !zombie || ppid != 7 || o != (Orphan{Pid: 42, Session: 42, Command: "qemu-system-x86"}) {
		t.Errorf("parseStat = %+v %d %v", o, ppid, zombie)
	}
	if _, _, zombie := parseStat(9, []byte("9 (odd) name) S 1 9 9 0")); zombie {
		t.Error("a sleeping process with ')' in its name read as a zombie")
	}
}

// TestReapOrphans: a process daemonized in a new session by a child comes to this process
// when the child exits, and is reaped as soon as it ends; the child itself, in this session,
// is left to os/exec.
func TestReapOrphans(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := ReapOrphans(ctx, OtherSession); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("sh", "-c", "setsid sleep 0.3 & echo $!").Output()
	if err != nil {
		t.Fatalf("the child: %v (os/exec must still reap it)", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	// While it sleeps, it is this process's (the machine's init would adopt it otherwise).
	if data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat")); err == nil {
		if _, ppid, _ := parseStat(pid, data); ppid != os.Getpid() {
			t.Errorf("the orphan's parent is %d, want this process %d", ppid, os.Getpid())
		}
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(5 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); os.IsNotExist(err) {
			return
		}
		select {
		case <-tick.C:
		case <-deadline:
			data, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
			t.Fatalf("the orphan %d was not reaped: %s", pid, data)
		}
	}
}
