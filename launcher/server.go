package launcher

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/klog/v2"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/launcher/disks"
	"github.com/vireo-dev/vireo/launcher/domain"
	"github.com/vireo-dev/vireo/launcher/protocol"
	"github.com/vireo-dev/vireo/launcher/virt"
	"github.com/vireo-dev/vireo/version"
)

// launcher serves the protocol for one VMI.
type launcher struct {
	opts *Options
	dir  string
	// daemon and conn are the launcher's libvirtd, set once lv is ready (see libvirt.go).
	daemon          *virt.Daemon
	conn            *virt.Conn
	lv              *libvirtStart
	hub             *hub
	events          *domainEvents
	emulation       domain.Emulation
	emulationReason string
	// refusal is why the guest may not start on this node ("" when it may): see emulationRefusal.
	refusal string

	mu        sync.Mutex
	started   bool   // Sync started the domain (or is starting it)
	name      string // the domain's name
	grace     time.Duration
	destroyed bool // the launcher destroyed the domain itself
	// target: this launcher waits for (or received) its guest by migration (PrepareTarget).
	target bool
	// migration is the latest migration out of this launcher (nil: none).
	migration *migrationRun
	// stopAfterMigration: SIGTERM came while the guest was leaving; should it stay, it is shut down.
	stopAfterMigration bool

	// freezeMu guards thawTimer, which thaws the guest's filesystems when a freeze's unfreeze
	// timeout passes.
	freezeMu  sync.Mutex
	thawTimer *time.Timer

	// pressAgain starts keepPressing's loop once.
	pressAgain sync.Once

	// followAgent starts followGuestAgent once; agentKick has it read the guest at once.
	followAgent sync.Once
	agentKick   chan struct{}
	// credentials are the VMI's access credentials (guarded by mu); credentialsDigest is a
	// digest of what the guest agent last applied (the follower's only).
	credentials       []v1.AccessCredential
	credentialsDigest string

	// dhcpOnce starts the guest's DHCP server (startGuestNetwork).
	dhcpOnce sync.Once
}

func newLauncher(o *Options, dir string) *launcher {
	emu, reason := virt.DetectEmulation()
	l := &launcher{opts: o, dir: dir, lv: &libvirtStart{ready: make(chan struct{})}, hub: newHub(), emulation: domain.Emulation(emu), emulationReason: reason,
		refusal: emulationRefusal(domain.Emulation(emu), reason, o), grace: time.Duration(v1.DefaultGracePeriodSeconds) * time.Second}
	l.events = &domainEvents{hub: l.hub, destroyRequested: func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.destroyed
	}}
	return l
}

func (l *launcher) Hello(_ context.Context, req *protocol.HelloRequest) (*protocol.HelloResponse, error) {
	v, err := protocol.NegotiateVersion(req.Versions)
	if err != nil {
		return nil, err
	}
	return &protocol.HelloResponse{Version: v, LauncherVersion: version.Get().GitVersion, VMIUID: l.opts.UID}, nil
}

// checkSync refuses a Sync or PrepareTarget request for another VMI than this launcher's.
func (l *launcher) checkSync(req *protocol.SyncRequest) error {
	if req.VMI == nil || string(req.VMI.UID) != l.opts.UID {
		return fmt.Errorf("this launcher runs VMI %s only", l.opts.UID)
	}
	return nil
}

// Sync prepares the VMI's disks, builds its domain and starts it, once.
func (l *launcher) Sync(ctx context.Context, req *protocol.SyncRequest) (*protocol.DomainStatus, error) {
	if err := l.checkSync(req); err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.credentials = req.VMI.Spec.AccessCredentials
	if l.started {
		// Also a migration's target: its guest arrives by migration, never by Sync.
		l.mu.Unlock()
		st := l.hub.get()
		return &st, nil
	}
	l.started = true
	if g := req.VMI.Spec.TerminationGracePeriodSeconds; g != nil {
		l.grace = time.Duration(*g) * time.Second
	}
	l.mu.Unlock()
	if l.refusal != "" {
		l.hub.end(protocol.DomainFailed, v1.ReasonEmulationNotAllowed, l.refusal)
		return nil, errors.New(l.refusal)
	}
	retry, err := l.start(ctx, req)
	if err != nil && retry {
		// Preparing the disks can succeed later (a claim's disk.img not written yet): the node
		// agent reports the error and calls Sync again.
		l.mu.Lock()
		l.started = false
		l.mu.Unlock()
		return nil, err
	}
	if err != nil {
		l.hub.end(protocol.DomainFailed, failureReason(err), err.Error())
		return nil, err
	}
	st := l.hub.get()
	return &st, nil
}

// start prepares the disks and starts the domain. A failure to prepare the disks may pass
// (retry true); one to build or start the domain will not.
func (l *launcher) start(ctx context.Context, req *protocol.SyncRequest) (retry bool, err error) {
	vmi := req.VMI
	xml, retry, err := l.prepare(ctx, req)
	if err != nil {
		return retry, err
	}
	if err := l.startGuestNetwork(vmi); err != nil {
		return true, err
	}
	if err := l.awaitLibvirt(ctx); err != nil {
		// A caller that gave up may try again; a libvirtd that did not start will not.
		return ctx.Err() != nil, err
	}
	start := l.conn.Start
	if s := vmi.Spec.StartStrategy; s != nil && *s == v1.StartStrategyPaused {
		start = l.conn.StartPaused
	}
	dom, err := start(ctx, xml)
	if err != nil {
		return false, fmt.Errorf("starting the domain: %w", err)
	}
	l.mu.Lock()
	l.name = dom.Name
	l.mu.Unlock()
	l.hub.update(func(st *protocol.DomainStatus) {
		if st.Phase == protocol.DomainNone {
			st.Phase = protocol.DomainRunning
		}
	})
	klog.InfoS("Domain started", "domain", dom.Name, "emulation", l.emulation)
	if l.opts.VCPUNice > 0 {
		if n, err := l.daemon.LowerVCPUPriority(dom.Name, l.opts.VCPUNice); err != nil {
			klog.ErrorS(err, "The guest's vCPUs keep their priority", "changed", n)
		}
	}
	return false, nil
}

// prepare prepares the VMI's disks and returns its domain's XML; the status gets the domain's
// emulation and interfaces. A failure to prepare the disks may pass (retry true).
func (l *launcher) prepare(ctx context.Context, req *protocol.SyncRequest) (xml string, retry bool, err error) {
	vmi := req.VMI
	prep := disks.Preparer{Dir: l.opts.PrivateDir + "/disks"}
	if err := os.MkdirAll(prep.Dir, 0o700); err != nil {
		return "", false, err
	}
	diskSources, err := prep.PrepareVolumes(ctx, vmi, disks.NodeVolumes{ContainerDisksDir: protocol.ContainerDisksDir, ClaimsDir: protocol.ClaimsDir, SecretsDir: protocol.SecretsDir,
		ConfigVolumesDir: protocol.ConfigVolumesDir, AccessCredentialsDir: protocol.AccessCredentialsDir})
	if err != nil {
		return "", true, fmt.Errorf("preparing disks: %w", err)
	}
	var kbContainer *v1.KernelBootContainer
	if fw := vmi.Spec.Domain.Firmware; fw != nil && fw.KernelBoot != nil {
		kbContainer = fw.KernelBoot.Container
	}
	kernel, err := disks.KernelBoot(protocol.KernelBootDir, kbContainer)
	if err != nil {
		return "", false, &reasonError{v1.ReasonKernelBootImageInvalid, fmt.Errorf("spec.domain.firmware.kernelBoot.container: %w", err)}
	}
	xml, ifaces, err := buildDomain(vmi, l.domainInputs(diskSources, kernel), l.opts.PodIP)
	if err != nil {
		return "", false, err
	}
	l.hub.update(func(st *protocol.DomainStatus) {
		st.Emulation, st.EmulationReason, st.Interfaces = string(l.emulation), l.emulationReason, ifaces
	})
	return xml, false, nil
}

// domainInputs are the inputs of the domain of this launcher's VMI, with its prepared disks
// and kernel.
func (l *launcher) domainInputs(disks map[string]domain.DiskSource, kernel *domain.KernelBootFiles) domain.Inputs {
	return domain.Inputs{Emulation: l.emulation, TCGCacheMiB: l.opts.TCGCacheMiB, Disks: disks, KernelBoot: kernel,
		ConsoleSocket: l.dir + "/" + protocol.ConsoleSocket, VNCSocket: l.dir + "/" + protocol.VNCSocket,
		AgentSocket: filepath.Join(l.opts.PrivateDir, protocol.AgentSocket)}
}

// buildDomain returns the XML of vmi's domain from in, and the interfaces the status reports,
// the guest reached at podIP.
func buildDomain(vmi *v1.VirtualMachineInstance, in domain.Inputs, podIP string) (string, []protocol.Interface, error) {
	def, err := domain.Build(vmi, in)
	if err != nil {
		return "", nil, err
	}
	xml, err := domain.Marshal(def)
	if err != nil {
		return "", nil, err
	}
	ifaces, err := interfaces(vmi, podIP)
	if err != nil {
		return "", nil, err
	}
	return xml, ifaces, nil
}

// interfaces are the VMI's interfaces as the guest has them: its MAC, reached at the Pod's address.
func interfaces(vmi *v1.VirtualMachineInstance, podIP string) ([]protocol.Interface, error) {
	var out []protocol.Interface
	for i := range vmi.Spec.Domain.Devices.Interfaces {
		iface := &vmi.Spec.Domain.Devices.Interfaces[i]
		mac, err := domain.InterfaceMAC(vmi, iface)
		if err != nil {
			return nil, err
		}
		pi := protocol.Interface{Name: iface.Name, MAC: mac}
		if podIP != "" {
			pi.IPs = []string{podIP}
		}
		out = append(out, pi)
	}
	return out, nil
}

// Shutdown presses the guest's ACPI power button.
func (l *launcher) Shutdown(ctx context.Context, _ *protocol.Empty) (*protocol.Empty, error) {
	name := l.domainName()
	if name == "" {
		return &protocol.Empty{}, nil
	}
	l.hub.update(func(st *protocol.DomainStatus) {
		if st.Phase == protocol.DomainRunning || st.Phase == protocol.DomainPaused {
			st.Phase = protocol.DomainShuttingDown
		}
	})
	if err := l.conn.Shutdown(ctx, name); err != nil {
		return nil, err
	}
	l.pressAgain.Do(func() { go l.keepPressing(name) })
	return &protocol.Empty{}, nil
}

// powerButtonRepeat is how often the launcher presses the power button again while a guest it
// asked to shut down still runs. A press before the guest's OS listens for it (in its firmware,
// early in its kernel, before acpid or logind run) is lost; KubeVirt presses once, and such a
// guest waits out its whole grace period (180 s by default) before it is destroyed.
const powerButtonRepeat = 5 * time.Second

// keepPressing presses the guest's power button every powerButtonRepeat until the domain ended
// or was destroyed; one loop per launcher, started by the first Shutdown.
func (l *launcher) keepPressing(name string) {
	tick := time.NewTicker(powerButtonRepeat)
	defer tick.Stop()
	for {
		select {
		case <-l.hub.final:
			return
		case <-tick.C:
		}
		l.mu.Lock()
		destroyed := l.destroyed
		l.mu.Unlock()
		if destroyed {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), powerButtonRepeat)
		err := l.conn.Shutdown(ctx, name)
		cancel()
		if err != nil {
			klog.V(2).InfoS("Pressing the power button again", "err", err)
		}
	}
}

// Stop destroys the domain.
func (l *launcher) Stop(ctx context.Context, _ *protocol.Empty) (*protocol.Empty, error) {
	l.destroy(ctx)
	return &protocol.Empty{}, nil
}

// Events streams the status: at once, then on every change.
func (l *launcher) Events(_ *protocol.Empty, s protocol.EventSender) error {
	changed, cancel := l.hub.subscribe()
	defer cancel()
	for {
		st := l.hub.get()
		if err := s.Send(&st); err != nil {
			return err
		}
		if st.Phase.Ended() {
			// Ending the stream flushes the final status to the node agent; the launcher
			// exits only after its server stopped gracefully.
			l.hub.sent(st)
			return nil
		}
		select {
		case <-changed:
		case <-s.Context().Done():
			return nil
		}
	}
}

func (l *launcher) domainName() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.name
}

// terminate handles SIGTERM: ACPI shutdown now (once an outgoing migration ended, should the
// guest still be here), destroy when the grace period is over. Without a domain the launcher
// ends at once.
func (l *launcher) terminate(ctx context.Context) <-chan time.Time {
	l.hub.update(func(st *protocol.DomainStatus) { st.Terminated = true })
	if l.domainName() == "" {
		l.hub.end(protocol.DomainSucceeded, v1.ReasonStoppedBeforeStart, "the launcher Pod was stopped before the guest started")
		return nil
	}
	l.mu.Lock()
	grace := l.grace
	leaving := l.migration != nil && !l.migration.ended
	l.stopAfterMigration = leaving
	l.mu.Unlock()
	if leaving {
		// The Pod of a guest migrating away is deleted once the guest runs on the target, maybe
		// before libvirt here has heard so: a shutdown now could reach the guest should libvirt
		// resume it here. The migration's end ends the launcher; else the grace ends the guest.
		klog.InfoS("Terminating once the outgoing migration ended", "grace", grace)
		return time.After(grace)
	}
	klog.InfoS("Terminating: shutting the guest down", "grace", grace)
	if _, err := l.Shutdown(ctx, nil); err != nil {
		klog.ErrorS(err, "ACPI shutdown")
	}
	return time.After(grace)
}

// destroy ends the domain at once.
func (l *launcher) destroy(ctx context.Context) {
	name := l.domainName()
	if name == "" {
		l.hub.end(protocol.DomainSucceeded, v1.ReasonStoppedBeforeStart, "stopped before the guest started")
		return
	}
	l.mu.Lock()
	l.destroyed = true
	l.mu.Unlock()
	if err := l.conn.Destroy(ctx, name); err != nil {
		klog.ErrorS(err, "Destroying the domain")
	}
}
