package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// mib is one MiB in bytes.
const mib = 1 << 20

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat (100 on Linux).
const clockTicks = 100

// proc is one process as /proc shows it.
type proc struct {
	Pid, PPid, UID int
	Args           []string
}

// name is the base name of the process's executable as its command line gives it.
func (p proc) name() string {
	if len(p.Args) == 0 {
		return ""
	}
	return filepath.Base(p.Args[0])
}

// joined is the command line as one string.
func (p proc) joined() string { return strings.Join(p.Args, " ") }

// hasArgPair reports whether the command line holds flag followed by value.
func (p proc) hasArgPair(flag, value string) bool {
	for i := 0; i+1 < len(p.Args); i++ {
		if p.Args[i] == flag && p.Args[i+1] == value {
			return true
		}
	}
	return false
}

// listProcs reads every process's parent, real uid and command line. Processes that exit while
// it reads are skipped; kernel threads (no command line) too.
func listProcs() ([]proc, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var out []proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		p, err := readProc(pid)
		if err != nil || len(p.Args) == 0 {
			continue
		}
		out = append(out, p)
	}
	return out, nil
}

func readProc(pid int) (proc, error) {
	p := proc{Pid: pid}
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

// descendants returns pid and every process below it.
func descendants(procs []proc, pid int) []proc {
	children := map[int][]proc{}
	var self *proc
	for i := range procs {
		children[procs[i].PPid] = append(children[procs[i].PPid], procs[i])
		if procs[i].Pid == pid {
			self = &procs[i]
		}
	}
	if self == nil {
		return nil
	}
	out := []proc{*self}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i].Pid]...)
	}
	return out
}

// memory is a process's resident memory.
type memory struct {
	RSS int64 `json:"rssBytes"`
	PSS int64 `json:"pssBytes"`
}

// readMemory reads VmRSS from status and Pss from smaps_rollup.
func readMemory(pid int) (memory, error) {
	fields, err := statusFields(pid)
	if err != nil {
		return memory{}, err
	}
	var m memory
	m.RSS = kiB(fields["VmRSS"])
	if data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid)); err == nil {
		for line := range strings.SplitSeq(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && k == "Pss" {
				m.PSS = kiB(v)
			}
		}
	}
	return m, nil
}

// kiB parses "1234 kB" into bytes.
func kiB(s string) int64 {
	n, _ := strconv.ParseInt(firstField(s), 10, 64)
	return n * 1024
}

// qemuRegions are the parts of a QEMU process's resident memory that its own mappings explain:
// the guest's RAM and TCG's translation-block cache (the code buffer, mapped rwx).
type qemuRegions struct {
	GuestRAMSize     int64 `json:"guestRAMMappingBytes"`
	GuestRAMResident int64 `json:"guestRAMResidentBytes"`
	TBCacheSize      int64 `json:"tbCacheMappingBytes"`
	TBCacheResident  int64 `json:"tbCacheResidentBytes"`
}

// readQEMURegions finds, in /proc/<pid>/smaps, the anonymous mapping that holds the guest's
// RAM (the one sized guestRAM, up to 8 MiB of alignment more) and the largest rwx mapping
// (TCG's code buffer), and returns how much of each is resident.
func readQEMURegions(pid int, guestRAM int64) (qemuRegions, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return qemuRegions{}, err
	}
	defer f.Close()
	var r qemuRegions
	var size int64
	var perms, path string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			size, perms, path = mappingSize(fields[0]), fields[1], ""
			if len(fields) >= 6 {
				path = fields[5]
			}
			continue
		}
		if len(fields) < 2 || fields[0] != "Rss:" {
			continue
		}
		rss := kiB(fields[1])
		switch {
		case path == "" && size >= guestRAM && size < guestRAM+8*mib && size > r.GuestRAMSize:
			r.GuestRAMSize, r.GuestRAMResident = size, rss
		case strings.HasPrefix(perms, "rwx") && size > r.TBCacheSize:
			r.TBCacheSize, r.TBCacheResident = size, rss
		}
	}
	return r, sc.Err()
}

// mappingSize is the size of an smaps range "start-end" (hexadecimal).
func mappingSize(rng string) int64 {
	a, b, _ := strings.Cut(rng, "-")
	start, err1 := strconv.ParseUint(a, 16, 64)
	end, err2 := strconv.ParseUint(b, 16, 64)
	if err1 != nil || err2 != nil || end < start {
		return 0
	}
	return int64(end - start)
}

// cpuTicks returns utime+stime of pid (all its threads), in clock ticks.
func cpuTicks(pid int) (int64, error) {
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

// hostCPU returns the busy and total ticks of all CPUs from /proc/stat.
func hostCPU() (busy, total int64, err error) {
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
