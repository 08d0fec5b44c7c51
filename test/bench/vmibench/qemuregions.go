package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/vireo-dev/vireo/test/bench/hostproc"
)

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
		rss := hostproc.KiB(fields[1])
		switch {
		case path == "" && size >= guestRAM && size < guestRAM+8*hostproc.MiB && size > r.GuestRAMSize:
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
