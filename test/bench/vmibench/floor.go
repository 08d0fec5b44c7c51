package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/launcher/disks"
	"github.com/vireo-dev/vireo/launcher/domain"
	"github.com/vireo-dev/vireo/launcher/protocol"
	"github.com/vireo-dev/vireo/launcher/virt"
	"github.com/vireo-dev/vireo/test/bench/hostproc"
)

// launcherUID is the user launchers (and so their libvirtd and QEMU) run as.
const launcherUID = 107

// The floor is what the launcher's own work costs with nothing of Kubernetes or Vireo around it:
// for each VMI of a run, a fresh session libvirtd as uid 107 in a network namespace of its own
// starts the domain the launcher would start. The domain XML is built here the way the launcher
// builds it (launcher/disks prepares the containerDisk overlay over a copy of the very disk
// file the containerDisk image holds, laid out as the kubelet mounts the image, launcher/domain converts the VMI as the API stored it, with the
// launcher's Inputs): only the paths differ. Building rather than capturing it needs no access
// to the launcher's private libvirtd, works for any VMI, and is checked against the real
// thing: the floor's QEMU command line is compared with the launcher's, paths aside.

// floorDomain is one domain of the floor.
type floorDomain struct {
	vmi     *v1.VirtualMachineInstance
	netns   string
	dir     string
	xml     string
	daemon  *virt.Daemon
	conn    *virt.Conn
	console *consoleWatch

	daemonReady, capabilities time.Duration
	// scheduled is when the domain's Start call was due (all at once: the same for every domain).
	scheduled time.Time
	started   time.Time
	startErr  error
}

// floorSpec is how a floor starts its domains.
type floorSpec struct {
	tcgCacheMiB uint
	// interval paces the Start calls (0: all at once), as the run it is the floor of.
	interval time.Duration
	timeout  time.Duration
}

// floorResult is the floor of one run size.
type floorResult struct {
	Domains int `json:"domains"`
	// DaemonReady is libvirtd's exec -> accepting socket; Capabilities the QEMU capabilities
	// probe a fresh daemon makes (the launcher starts it right after its daemon, in parallel
	// with waiting for its VMI). Both happen before Start, all daemons at once.
	DaemonReady  durations `json:"daemonReady"`
	Capabilities durations `json:"capabilitiesProbe"`
	// StartReturned and Marker are measured from the moment each domain's Start call was due
	// (all at once, or paced as the run's creates).
	StartReturned durations `json:"startReturned"`
	Marker        durations `json:"startToMarker"`
	// FreshTotal is daemon start + capabilities probe + start -> marker, per domain.
	FreshTotal durations `json:"freshDaemonToMarker"`
	// LibvirtdRSS and QEMURSS are in MiB, once every guest printed its marker.
	LibvirtdRSS numbers     `json:"libvirtdRSSMiB"`
	QEMURSS     numbers     `json:"qemuRSSMiB"`
	QEMURegions qemuRegions `json:"qemuRegionsFirstDomain"`
	// MachineRunning is the machine's memory once every guest printed its marker.
	MachineRunning hostproc.HostMemory `json:"machineMemoryAllRunning"`
	// QEMUArgs is the first domain's QEMU command line, its paths replaced.
	QEMUArgs []string `json:"qemuArgs"`
}

// runFloor measures the floor for vmis (the VMIs of one run, as stored by the API), whose
// containerDisk volumes use imageFile.
func runFloor(ctx context.Context, vmis []*v1.VirtualMachineInstance, imageFile string, spec floorSpec) (res floorResult, err error) {
	ctx, cancel := context.WithTimeout(ctx, spec.timeout)
	defer cancel()
	doms, stop, err := startFloor(ctx, vmis, imageFile, spec)
	defer func() { err = errors.Join(err, stop()) }()
	if err != nil {
		return res, err
	}
	res, err = floorTimes(ctx, doms)
	if err != nil {
		return res, err
	}
	if res.MachineRunning, err = hostproc.ReadHostMemory(); err != nil {
		return res, err
	}
	return res, floorMemory(doms, &res)
}

// startFloor prepares a floor domain per VMI, each on a fresh session libvirtd of its own in a
// network namespace of its own, starts the daemons, then makes the Start calls, at once or
// spec.interval apart (their consoles watched from before), and returns when every call
// returned. stop removes it all; call it even when startFloor fails.
func startFloor(ctx context.Context, vmis []*v1.VirtualMachineInstance, imageFile string, spec floorSpec) (doms []*floorDomain, stop func() error, err error) {
	base, err := os.MkdirTemp(floorTmp, floorDirPrefix)
	if err != nil {
		return nil, func() error { return nil }, err
	}
	doms = make([]*floorDomain, len(vmis))
	stop = func() error { return errors.Join(stopFloor(doms), os.RemoveAll(base)) }
	if err := os.Chmod(base, 0o755); err != nil {
		return doms, stop, err
	}
	image, err := layOutImages(vmis, imageFile, filepath.Join(base, "containerdisks"))
	if err != nil {
		return doms, stop, err
	}
	for i, vmi := range vmis {
		d := &floorDomain{vmi: vmi, netns: fmt.Sprintf("%s%d", floorNetnsPrefix, i), dir: filepath.Join(base, fmt.Sprintf("d%d", i))}
		doms[i] = d
		if err := d.prepare(ctx, image, spec.tcgCacheMiB); err != nil {
			return doms, stop, fmt.Errorf("floor domain %d: %w", i, err)
		}
	}
	say("floor, %d domain(s): starting %d fresh session libvirtd and probing QEMU's capabilities", len(doms), len(doms))
	if err := forEach(doms, func(d *floorDomain) error { return d.startDaemon(ctx) }); err != nil {
		return doms, stop, err
	}
	pace := "all at once"
	if spec.interval > 0 {
		pace = spec.interval.String() + " apart"
	}
	say("floor, %d domain(s): starting them %s", len(doms), pace)
	t0 := time.Now()
	for i, d := range doms {
		d.scheduled = t0.Add(time.Duration(i) * spec.interval)
		d.console = watchConsole(ctx, filepath.Join(d.dir, protocol.ConsoleSocket))
	}
	_ = forEach(doms, func(d *floorDomain) error {
		if d.startErr = waitUntil(ctx, d.scheduled); d.startErr == nil {
			_, d.startErr = d.conn.Start(ctx, d.xml)
		}
		d.started = time.Now()
		return nil
	})
	return doms, stop, nil
}

// waitUntil returns at t, or with ctx's error when it ends first.
func waitUntil(ctx context.Context, t time.Time) error {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// prepare creates the domain's directory, its containerDisk overlay and its XML.
func (d *floorDomain) prepare(ctx context.Context, image string, tcgCacheMiB uint) error {
	if err := createNetns(ctx, d.netns, d.vmi); err != nil {
		return err
	}
	if err := os.Mkdir(d.dir, 0o700); err != nil {
		return err
	}
	prep := disks.Preparer{Dir: filepath.Join(d.dir, "disks")}
	if err := os.Mkdir(prep.Dir, 0o700); err != nil {
		return err
	}
	node := disks.NodeVolumes{ContainerDisksDir: image, ClaimsDir: protocol.ClaimsDir}
	srcs, err := prep.PrepareVolumes(ctx, d.vmi, node)
	if err != nil {
		return err
	}
	if err := chownTree(d.dir, launcherUID); err != nil {
		return err
	}
	emu, _ := virt.DetectEmulation()
	def, err := domain.Build(d.vmi, domain.Inputs{Emulation: domain.Emulation(emu), TCGCacheMiB: tcgCacheMiB, Disks: srcs,
		ConsoleSocket: filepath.Join(d.dir, protocol.ConsoleSocket), VNCSocket: filepath.Join(d.dir, protocol.VNCSocket),
		AgentSocket: filepath.Join(d.dir, protocol.AgentSocket)})
	if err != nil {
		return err
	}
	d.xml, err = domain.Marshal(def)
	return err
}

// startDaemon starts the domain's libvirtd, connects and has it probe QEMU's capabilities.
func (d *floorDomain) startDaemon(ctx context.Context) error {
	daemon, err := startDaemonIn(ctx, d.netns, virt.DaemonConfig{Dir: d.dir,
		Credential: &syscall.Credential{Uid: launcherUID, Gid: launcherUID}})
	if err != nil {
		return err
	}
	d.daemon, d.daemonReady = daemon, daemon.StartupDuration()
	if d.conn, err = daemon.Connect(ctx); err != nil {
		return err
	}
	emu, _ := virt.DetectEmulation()
	began := time.Now()
	if _, err := d.conn.DomainCapabilities(ctx, emu); err != nil {
		return err
	}
	d.capabilities = time.Since(began)
	return nil
}

// floorTimes waits until every guest printed its marker and summarizes the times, each from
// the moment its domain's Start was due.
func floorTimes(ctx context.Context, doms []*floorDomain) (floorResult, error) {
	res := floorResult{Domains: len(doms)}
	var ready, caps, started, marker, fresh []time.Duration
	for _, d := range doms {
		if d.startErr != nil {
			return res, fmt.Errorf("floor: starting %s: %w; QEMU's log: %s", d.vmi.Name, d.startErr, d.qemuLog())
		}
		select {
		case <-d.console.done:
		case <-ctx.Done():
		}
		_, m, err := d.console.result()
		if m.IsZero() {
			return res, fmt.Errorf("floor: the guest of %s never printed %s (%v); console: %q", d.vmi.Name, guestMarker, err, d.console.output())
		}
		ready, caps = append(ready, d.daemonReady), append(caps, d.capabilities)
		started, marker = append(started, d.started.Sub(d.scheduled)), append(marker, m.Sub(d.scheduled))
		fresh = append(fresh, d.daemonReady+d.capabilities+m.Sub(d.scheduled))
	}
	res.DaemonReady, res.Capabilities = summarize(ready), summarize(caps)
	res.StartReturned, res.Marker, res.FreshTotal = summarize(started), summarize(marker), summarize(fresh)
	return res, nil
}

// floorMemory records the resident memory of the floor's libvirtd and QEMU processes.
func floorMemory(doms []*floorDomain, res *floorResult) error {
	var libvirtd, qemu []float64
	for i, d := range doms {
		name := domain.DomainName(d.vmi)
		qpid, err := d.daemon.QEMUPid(name)
		if err != nil {
			return err
		}
		lm, err := hostproc.ReadMemory(d.daemon.Pid())
		if err != nil {
			return err
		}
		qm, err := hostproc.ReadMemory(qpid)
		if err != nil {
			return err
		}
		libvirtd, qemu = append(libvirtd, float64(lm.RSS)/hostproc.MiB), append(qemu, float64(qm.RSS)/hostproc.MiB)
		if i == 0 {
			if res.QEMURegions, err = readQEMURegions(qpid, guestRAM(d.vmi)); err != nil {
				return err
			}
			p, err := hostproc.Read(qpid)
			if err != nil {
				return err
			}
			res.QEMUArgs = normalizeArgs(p.Args)
		}
	}
	res.LibvirtdRSS, res.QEMURSS = summarizeNumbers(libvirtd), summarizeNumbers(qemu)
	return nil
}

// qemuLog is the end of the domain's QEMU log, for errors.
func (d *floorDomain) qemuLog() string {
	if d.daemon == nil {
		return ""
	}
	b, _ := os.ReadFile(d.daemon.Layout().QEMULogFile(domain.DomainName(d.vmi)))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// stopFloor destroys the floor's domains, stops its daemons and deletes its network namespaces.
func stopFloor(doms []*floorDomain) error {
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for _, d := range doms {
		if d == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var err error
			if d.console != nil {
				d.console.close()
			}
			if d.conn != nil {
				_ = d.conn.Close()
			}
			if d.daemon != nil {
				err = d.daemon.Stop(ctx)
			}
			err = errors.Join(err, deleteNetns(d.netns))
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// forEach runs fn on every domain at once and returns the first error.
func forEach(doms []*floorDomain, fn func(*floorDomain) error) error {
	errs := make([]error, len(doms))
	var wg sync.WaitGroup
	for i, d := range doms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fn(d)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// layOutImages lays imageFile out in dir as the kubelet mounts a containerDisk's image in a
// launcher Pod: dir/<volume name>/disk/disk.qcow2 for each containerDisk volume of vmis, one
// copy, linked (readable by the launcher's user). It returns dir, for
// disks.NodeVolumes.ContainerDisksDir.
func layOutImages(vmis []*v1.VirtualMachineInstance, imageFile, dir string) (string, error) {
	in, err := os.Open(imageFile)
	if err != nil {
		return "", err
	}
	defer in.Close()
	var first string
	for _, vmi := range vmis {
		for _, vol := range vmi.Spec.Volumes {
			if vol.ContainerDisk == nil {
				continue
			}
			dst := filepath.Join(dir, vol.Name, "disk", "disk.qcow2")
			if _, err := os.Stat(dst); err == nil {
				continue
			}
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return "", err
			}
			if first != "" {
				if err := os.Link(first, dst); err != nil {
					return "", err
				}
				continue
			}
			if err := copyFile(in, dst); err != nil {
				return "", err
			}
			first = dst
		}
	}
	return dir, nil
}

// copyFile copies in to a new file dst, readable by everyone.
func copyFile(in io.Reader, dst string) error {
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// chownTree hands dir and everything below it to uid (and the group of the same number).
func chownTree(dir string, uid int) error {
	return filepath.WalkDir(dir, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, uid, uid)
	})
}
