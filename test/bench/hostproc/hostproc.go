// Package hostproc reads processes from /proc for the benchmarks: command lines, parents,
// resident memory and CPU time.
package hostproc

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// MiB is one MiB in bytes.
const MiB = 1 << 20

// ClockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat (100 on Linux).
const ClockTicks = 100

// Proc is one process as /proc shows it.
type Proc struct {
	Pid, PPid, UID int
	Args           []string
}

// Name is the base name of the process's executable as its command line gives it.
func (p Proc) Name() string {
	if len(p.Args) == 0 {
		return ""
	}
	return filepath.Base(p.Args[0])
}

// Joined is the command line as one string.
func (p Proc) Joined() string { return strings.Join(p.Args, " ") }

// HasArgPair reports whether the command line holds flag followed by value.
func (p Proc) HasArgPair(flag, value string) bool {
	for i := 0; i+1 < len(p.Args); i++ {
		if p.Args[i] == flag && p.Args[i+1] == value {
			return true
		}
	}
	return false
}

// List reads every process's parent, real uid and command line. Processes that exit while
// it reads are skipped; kernel threads (no command line) too.
func List() ([]Proc, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var out []Proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		p, err := Read(pid)
		if err != nil || len(p.Args) == 0 {
			continue
		}
		out = append(out, p)
	}
	return out, nil
}

// Read reads one process's parent, real uid and command line.
func Read(pid int) (Proc, error) {
	p := Proc{Pid: pid}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return p, err
	}
	if trimmed := bytes.TrimRight(cmdline, "\x00"); len(trimmed) > 0 {
		p.Args = strings.Split(string(trimmed), "\x00")
	}
	fields, err := statusFields(pid)
	if err != nil {
		return p, err
	}
	p.PPid, _ = strconv.Atoi(firstField(fields["PPid"]))
	p.UID, _ = strconv.Atoi(firstField(fields["Uid"]))
	return p, nil
}

// statusFields parses /proc/<pid>/status into its "Key: value" lines.
func statusFields(pid int) (map[string]string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for line := range strings.SplitSeq(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out, nil
}

func firstField(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return ""
}

// Descendants returns pid and every process below it.
func Descendants(procs []Proc, pid int) []Proc {
	children := map[int][]Proc{}
	var self *Proc
	for i := range procs {
		children[procs[i].PPid] = append(children[procs[i].PPid], procs[i])
		if procs[i].Pid == pid {
			self = &procs[i]
		}
	}
	if self == nil {
		return nil
	}
	out := []Proc{*self}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i].Pid]...)
	}
	return out
}

// Memory is a process's resident memory. RSS is Anon (its heap and stacks) plus File (pages
// of files it maps, such as an etcd database, which the kernel may drop and read again) plus
// shared memory. Peak is the highest RSS the process has had (VmHWM).
type Memory struct {
	RSS  int64 `json:"rssBytes"`
	PSS  int64 `json:"pssBytes"`
	Anon int64 `json:"rssAnonBytes"`
	File int64 `json:"rssFileBytes"`
	Peak int64 `json:"peakRSSBytes"`
}

// ReadMemory reads VmRSS, VmHWM, RssAnon and RssFile from status and Pss from smaps_rollup.
func ReadMemory(pid int) (Memory, error) {
	fields, err := statusFields(pid)
	if err != nil {
		return Memory{}, err
	}
	var m Memory
	m.RSS, m.Anon, m.File, m.Peak = KiB(fields["VmRSS"]), KiB(fields["RssAnon"]), KiB(fields["RssFile"]), KiB(fields["VmHWM"])
	if data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid)); err == nil {
		for line := range strings.SplitSeq(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && k == "Pss" {
				m.PSS = KiB(v)
			}
		}
	}
	return m, nil
}

// KiB parses "1234 kB" into bytes.
func KiB(s string) int64 {
	n, _ := strconv.ParseInt(firstField(s), 10, 64)
	return n * 1024
}

// CPUTicks returns utime+stime of pid (all its threads), in clock ticks.
func CPUTicks(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return 0, fmt.Errorf("unexpected /proc/%d/stat: %q", pid, s)
	}
	fields := strings.Fields(s[i+2:])
	// fields[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(fields) < 13 {
		return 0, fmt.Errorf("unexpected /proc/%d/stat: %q", pid, s)
	}
	u, err1 := strconv.ParseInt(fields[11], 10, 64)
	st, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("unexpected /proc/%d/stat: %q", pid, s)
	}
	return u + st, nil
}

// HostCPU returns the busy and total ticks of all CPUs from /proc/stat.
func HostCPU() (busy, total int64, err error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	line, _, _ := strings.Cut(string(data), "\n")
	fields := strings.Fields(line)
	if len(fields) < 5 || fields[0] != "cpu" {
		return 0, 0, fmt.Errorf("unexpected /proc/stat: %q", line)
	}
	for i, f := range fields[1:] {
		n, _ := strconv.ParseInt(f, 10, 64)
		total += n
		if i != 3 && i != 4 { // idle and iowait
			busy += n
		}
	}
	return busy, total, nil
}

// HostMemory is the machine's memory from /proc/meminfo, in bytes.
type HostMemory struct {
	Total     int64 `json:"totalBytes"`
	Available int64 `json:"availableBytes"`
}

// Used is what the machine cannot hand out without reclaiming: Total - Available.
func (m HostMemory) Used() int64 { return m.Total - m.Available }

// ReadHostMemory reads MemTotal and MemAvailable.
func ReadHostMemory() (HostMemory, error) {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return HostMemory{}, err
	}
	return parseMeminfo(string(data))
}

func parseMeminfo(s string) (HostMemory, error) {
	var m HostMemory
	for line := range strings.SplitSeq(s, "\n") {
		k, v, ok := strings.Cut(line, ":")
		switch {
		case !ok:
		case k == "MemTotal":
			m.Total = KiB(v)
		case k == "MemAvailable":
			m.Available = KiB(v)
		}
	}
	if m.Total == 0 || m.Available == 0 {
		return m, fmt.Errorf("/proc/meminfo has no MemTotal or MemAvailable: %.200q", s)
	}
	return m, nil
}
