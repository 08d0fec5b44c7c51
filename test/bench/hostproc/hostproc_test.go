package hostproc

import (
	"os"
	"testing"
)

// TestSelf reads the test process itself.
func TestSelf(t *testing.T) {
	pid := os.Getpid()
	procs, err := List()
	if err != nil {
		t.Fatal(err)
	}
	var self *Proc
	for i := range procs {
		if procs[i].Pid == pid {
			self = &procs[i]
		}
	}
	if self == nil {
		t.Fatalf("List did not find the test process %d among %d processes", pid, len(procs))
	}
	if len(self.Args) == 0 || self.Name() == "" || self.PPid != os.Getppid() || self.UID != os.Getuid() {
		t.Errorf("List gave %+v for the test process (ppid %d, uid %d)", *self, os.Getppid(), os.Getuid())
	}
	if r, err := Read(pid); err != nil || r.Joined() != self.Joined() {
		t.Errorf("Read = %+v, %v; want %q", r, err, self.Joined())
	}

	m, err := ReadMemory(pid)
	if err != nil {
		t.Fatal(err)
	}
	if m.RSS <= 0 || m.Anon <= 0 || m.File <= 0 || m.Anon+m.File > m.RSS {
		t.Errorf("ReadMemory = %+v, want a positive RSS made of anonymous and file pages", m)
	}
	if m.Peak < m.RSS {
		t.Errorf("ReadMemory = %+v, want a peak (VmHWM) of at least the RSS", m)
	}
	if _, err := CPUTicks(pid); err != nil {
		t.Error(err)
	}
	if busy, total, err := HostCPU(); err != nil || total <= 0 || busy > total {
		t.Errorf("HostCPU = %d, %d, %v", busy, total, err)
	}

	desc := Descendants(procs, pid)
	if len(desc) == 0 || desc[0].Pid != pid {
		t.Errorf("Descendants of the test process = %+v, want it first", desc)
	}
	if Descendants(procs, -1) != nil {
		t.Error("Descendants of an absent pid is not nil")
	}
}

func TestProcArgs(t *testing.T) {
	p := Proc{Args: []string{"/usr/bin/vireo-launcher", "--namespace", "ns", "--uid"}}
	if p.Name() != "vireo-launcher" || p.Joined() != "/usr/bin/vireo-launcher --namespace ns --uid" {
		t.Errorf("Name %q, Joined %q", p.Name(), p.Joined())
	}
	if !p.HasArgPair("--namespace", "ns") || p.HasArgPair("--uid", "") || p.HasArgPair("ns", "--namespace") {
		t.Error("HasArgPair")
	}
	if KiB("1234 kB") != 1234*1024 || KiB("") != 0 {
		t.Error("KiB")
	}
}

func TestHostMemory(t *testing.T) {
	m, err := parseMeminfo("MemTotal:       24589432 kB\nMemFree:         1000 kB\nMemAvailable:   20000000 kB\n")
	if err != nil {
		t.Fatal(err)
	}
	if m.Total != 24589432*1024 || m.Available != 20000000*1024 || m.Used() != 4589432*1024 {
		t.Errorf("parsed %+v, used %d", m, m.Used())
	}
	if _, err := parseMeminfo("MemTotal: 5 kB\n"); err == nil {
		t.Error("meminfo without MemAvailable parsed")
	}
	live, err := ReadHostMemory()
	if err != nil {
		t.Fatal(err)
	}
	if live.Available <= 0 || live.Available > live.Total {
		t.Errorf("this machine's memory: %+v", live)
	}
}
