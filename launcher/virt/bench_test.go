package virt

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The benchmarks measure the figures the launcher's budget depends on. Run them with
// go test -run '^$' -bench . -benchtime 3x ./launcher/virt/ (they start real processes).

func BenchmarkDaemonStart(b *testing.B) {
	skipUnlessProcesses(b)
	var ready time.Duration
	for i := 0; i < b.N; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		d, err := StartDaemon(ctx, DaemonConfig{Dir: newDaemonDir(b), Credential: testCredential()})
		if err != nil {
			cancel()
			b.Fatal(err)
		}
		ready += d.StartupDuration()
		b.StopTimer()
		stopAndCheck(b, d)
		cancel()
		b.StartTimer()
	}
	b.ReportMetric(float64(ready.Milliseconds())/float64(b.N), "ms-to-socket-ready")
}

func BenchmarkDomainStart(b *testing.B) {
	skipUnlessProcesses(b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	d := startTestDaemon(b, "")
	c := connectTest(b, d)
	xml := testDomainXML("vm", filepath.Join(d.Layout().Dir, "serial.sock"))
	// The first start of a fresh daemon also probes QEMU's capabilities.
	began := time.Now()
	if _, err := c.Start(ctx, xml); err != nil {
		b.Fatal(err)
	}
	first := time.Since(began)
	if err := c.Destroy(ctx, "vm"); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Start(ctx, xml); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := c.Destroy(ctx, "vm"); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(first.Milliseconds()), "ms-first-start")

	// A fresh daemon whose capabilities were probed before the first start.
	d2 := startTestDaemon(b, "")
	c2 := connectTest(b, d2)
	began = time.Now()
	if _, err := c2.DomainCapabilities(ctx, EmulationTCG); err != nil {
		b.Fatal(err)
	}
	probe := time.Since(began)
	began = time.Now()
	if _, err := c2.Start(ctx, testDomainXML("vm", filepath.Join(d2.Layout().Dir, "serial.sock"))); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(probe.Milliseconds()), "ms-capabilities-probe")
	b.ReportMetric(float64(time.Since(began).Milliseconds()), "ms-first-start-after-probe")
}

// BenchmarkIdleCPU measures the CPU libvirtd and QEMU use over 10 s with the no-disk guest
// running (SeaBIOS idling) and paused, and their resident memory.
func BenchmarkIdleCPU(b *testing.B) {
	skipUnlessProcesses(b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	d := startTestDaemon(b, "")
	c := connectTest(b, d)
	if _, err := c.Start(ctx, testDomainXML("vm", filepath.Join(d.Layout().Dir, "serial.sock"))); err != nil {
		b.Fatal(err)
	}
	qemu, err := d.QEMUPid("vm")
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		running := cpuShare(b, 10*time.Second, d.Pid(), qemu)
		if err := c.Pause(ctx, "vm"); err != nil {
			b.Fatal(err)
		}
		paused := cpuShare(b, 10*time.Second, d.Pid(), qemu)
		if err := c.Resume(ctx, "vm"); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(running[0], "libvirtd-cpu%-running")
		b.ReportMetric(running[1], "qemu-cpu%-running")
		b.ReportMetric(paused[0], "libvirtd-cpu%-paused")
		b.ReportMetric(paused[1], "qemu-cpu%-paused")
	}
	b.ReportMetric(float64(rssKiB(b, d.Pid()))/1024, "libvirtd-rss-MiB")
	b.ReportMetric(float64(rssKiB(b, qemu))/1024, "qemu-rss-MiB")
}

// cpuShare returns each pid's CPU use over window, in percent of one core.
func cpuShare(b *testing.B, window time.Duration, pids ...int) []float64 {
	before := make([]int64, len(pids))
	for i, p := range pids {
		before[i] = cpuTicks(b, p)
	}
	began := time.Now()
	<-time.After(window)
	elapsed := time.Since(began).Seconds()
	out := make([]float64, len(pids))
	for i, p := range pids {
		// USER_HZ is 100 on Linux.
		out[i] = float64(cpuTicks(b, p)-before[i]) / 100 / elapsed * 100
	}
	return out
}

// cpuTicks returns utime+stime of pid, in clock ticks.
func cpuTicks(b *testing.B, pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	// fields[0] is the state (field 3); utime and stime are fields 14 and 15.
	u, err1 := strconv.ParseInt(fields[11], 10, 64)
	st, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		b.Fatalf("parse /proc/%d/stat: %q", pid, s)
	}
	return u + st
}

// rssKiB returns VmRSS of pid.
func rssKiB(b *testing.B, pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			n, err := strconv.ParseInt(f[1], 10, 64)
			if err == nil {
				return n
			}
		}
	}
	b.Fatalf("no VmRSS for pid %d", pid)
	return 0
}
