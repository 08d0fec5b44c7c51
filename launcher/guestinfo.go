package launcher

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/launcher/protocol"
	"github.com/vireo-dev/vireo/launcher/virt"
)

// GuestInfo answers what the guest agent says of the guest (the guestosinfo, userlist and
// filesystemlist subresources); FailedPrecondition when no agent is connected.
func (l *launcher) GuestInfo(ctx context.Context, _ *protocol.Empty) (*v1.VirtualMachineInstanceGuestAgentInfo, error) {
	name, _, err := l.actionState(ctx, "ask the guest agent of")
	if err != nil {
		return nil, err
	}
	if !l.hub.get().AgentConnected {
		return nil, status.Error(codes.FailedPrecondition, "VMI does not have guest agent connected")
	}
	params, err := l.conn.GuestInfo(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("asking the guest agent: %w", err)
	}
	agent, err := l.conn.AgentInfo(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("asking the guest agent: %w", err)
	}
	info := guestAgentInfo(params, agent)
	// KubeVirt's "frozen", or nothing: frozen while a freeze of the launcher's holds, or while
	// the agent says so (a freeze from inside the guest). A guest with nothing to freeze (no
	// block filesystem mounted) is frozen as asked, though its agent says "thawed".
	l.freezeMu.Lock()
	frozen := l.thawTimer != nil
	l.freezeMu.Unlock()
	if !frozen {
		st, err := l.conn.FreezeStatus(ctx, name)
		frozen = err == nil && st == "frozen"
	}
	if frozen {
		info.FSFreezeStatus = "frozen"
	}
	return &info, nil
}

// guestRefreshInterval is how often the launcher asks a connected guest agent for the
// guest's interfaces again (they change with DHCP and the guest's own configuration).
const guestRefreshInterval = 30 * time.Second

// agentConnected starts following the guest agent of domain name (once per launcher) and has
// it read the guest at once.
func (l *launcher) agentConnected(ctx context.Context, name string) {
	l.followAgent.Do(func() {
		l.agentKick = make(chan struct{}, 1)
		go l.followGuestAgent(ctx, name)
	})
	select {
	case l.agentKick <- struct{}{}:
	default:
	}
}

// followGuestAgent reads the guest's operating system and interface names from its agent into
// the domain status (the VMI's status.guestOSInfo and status.interfaces[].interfaceName) when
// the agent connects and then every guestRefreshInterval while it is connected.
func (l *launcher) followGuestAgent(ctx context.Context, name string) {
	tick := time.NewTicker(guestRefreshInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.agentKick:
		case <-tick.C:
		}
		if l.hub.get().AgentConnected {
			l.readGuest(ctx, name)
			l.syncAccessCredentials(ctx, name)
		}
	}
}

// readGuest reads the guest's operating system and interfaces from its agent into the domain
// status.
func (l *launcher) readGuest(ctx context.Context, name string) {
	var osInfo *v1.VirtualMachineInstanceGuestOSInfo
	if params, err := l.conn.GuestInfo(ctx, name); err == nil {
		os := guestAgentInfo(params, virt.AgentInfo{}).OS
		osInfo = &os
	} else {
		klog.InfoS("The guest agent did not say what the guest runs", "err", err)
	}
	guest, ifaceErr := l.conn.GuestInterfaces(ctx, name)
	// The status changes (and the node agent hears of it) only when the guest does.
	now := l.hub.get()
	named := slices.Clone(now.Interfaces)
	if ifaceErr == nil {
		nameInterfaces(named, guest)
	}
	if (osInfo == nil || reflect.DeepEqual(osInfo, now.GuestOS)) && slices.Equal(namesOf(named), namesOf(now.Interfaces)) {
		return
	}
	l.hub.update(func(st *protocol.DomainStatus) {
		if !st.AgentConnected {
			return
		}
		if osInfo != nil {
			st.GuestOS = osInfo
		}
		if ifaceErr == nil {
			nameInterfaces(st.Interfaces, guest)
		}
	})
}

// namesOf lists the guest's names of ifaces.
func namesOf(ifaces []protocol.Interface) []string {
	out := make([]string, len(ifaces))
	for i := range ifaces {
		out[i] = ifaces[i].GuestName
	}
	return out
}

// nameInterfaces gives each domain interface the guest's name of the interface with its MAC
// address.
func nameInterfaces(ifaces []protocol.Interface, guest []virt.GuestInterface) {
	for i := range ifaces {
		ifaces[i].GuestName = ""
		for _, g := range guest {
			if strings.EqualFold(g.MAC, ifaces[i].MAC) {
				ifaces[i].GuestName = g.Name
			}
		}
	}
}

// guestAgentInfo maps libvirt's guest info parameters and the agent's own info to KubeVirt's
// VirtualMachineInstanceGuestAgentInfo.
func guestAgentInfo(p virt.GuestInfo, agent virt.AgentInfo) v1.VirtualMachineInstanceGuestAgentInfo {
	info := v1.VirtualMachineInstanceGuestAgentInfo{
		GAVersion: agent.Version,
		Hostname:  paramString(p, "hostname"),
		OS: v1.VirtualMachineInstanceGuestOSInfo{
			Name: paramString(p, "os.name"), KernelRelease: paramString(p, "os.kernel-release"),
			Version: paramString(p, "os.version"), PrettyName: paramString(p, "os.pretty-name"),
			VersionID: paramString(p, "os.version-id"), KernelVersion: paramString(p, "os.kernel-version"),
			Machine: paramString(p, "os.machine"), ID: paramString(p, "os.id"),
		},
	}
	info.APIVersion, info.Kind = v1.SchemeGroupVersion.String(), "VirtualMachineInstanceGuestAgentInfo"
	for _, c := range agent.SupportedCommands {
		info.SupportedCommands = append(info.SupportedCommands, v1.GuestAgentCommandInfo{Name: c.Name, Enabled: c.Enabled})
	}
	if tz := paramString(p, "timezone.name"); tz != "" || p["timezone.offset"] != nil {
		info.Timezone = fmt.Sprintf("%s, %d", tz, paramInt(p, "timezone.offset"))
	}
	for i := range paramInt(p, "user.count") {
		prefix := fmt.Sprintf("user.%d.", i)
		info.UserList = append(info.UserList, v1.VirtualMachineInstanceGuestOSUser{
			UserName: paramString(p, prefix+"name"), Domain: paramString(p, prefix+"domain"),
			LoginTime: float64(paramInt(p, prefix+"login-time")) / 1000, // libvirt: milliseconds
		})
	}
	for i := range paramInt(p, "fs.count") {
		prefix := fmt.Sprintf("fs.%d.", i)
		fs := v1.VirtualMachineInstanceFileSystem{DiskName: paramString(p, prefix+"name"), MountPoint: paramString(p, prefix+"mountpoint"),
			FileSystemType: paramString(p, prefix+"fstype"), UsedBytes: int64(paramInt(p, prefix+"used-bytes")), TotalBytes: int64(paramInt(p, prefix+"total-bytes"))}
		for j := range paramInt(p, prefix+"disk.count") {
			fs.Disk = append(fs.Disk, v1.VirtualMachineInstanceFileSystemDisk{Serial: paramString(p, fmt.Sprintf("%sdisk.%d.serial", prefix, j))})
		}
		info.FSInfo.Filesystems = append(info.FSInfo.Filesystems, fs)
	}
	return info
}

// paramString is a string parameter, "" when missing or of another type.
func paramString(p virt.GuestInfo, key string) string {
	s, _ := p[key].(string)
	return s
}

// paramInt is an integer parameter of any of libvirt's integer types, 0 when missing.
func paramInt(p virt.GuestInfo, key string) int {
	switch v := p[key].(type) {
	case int32:
		return int(v)
	case uint32:
		return int(v)
	case int64:
		return int(v)
	case uint64:
		return int(v)
	case int:
		return v
	}
	return 0
}

// Freeze freezes the guest's filesystems through its agent (the VMI action freeze) and thaws
// them after the request's timeout unless Unfreeze came first; a new freeze restarts the
// timeout.
func (l *launcher) Freeze(ctx context.Context, req *protocol.FreezeRequest) (*protocol.Empty, error) {
	name, _, err := l.actionState(ctx, "freeze")
	if err != nil {
		return nil, err
	}
	if !l.hub.get().AgentConnected {
		return nil, status.Error(codes.FailedPrecondition, "VMI does not have guest agent connected: filesystems are frozen through the guest agent")
	}
	if req.UnfreezeTimeout <= 0 {
		return nil, status.Error(codes.InvalidArgument, "the unfreeze timeout must be positive")
	}
	l.freezeMu.Lock()
	defer l.freezeMu.Unlock()
	// A freeze while the launcher's freeze holds (a snapshot tool retrying) only restarts the
	// timeout: the agent refuses to freeze a frozen guest.
	if l.thawTimer == nil {
		n, err := l.conn.Freeze(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("freezing the guest's filesystems: %w", err)
		}
		klog.InfoS("Froze the guest's filesystems", "filesystems", n, "unfreezeTimeout", req.UnfreezeTimeout)
		l.setFrozen(true)
	}
	if l.thawTimer != nil {
		l.thawTimer.Stop()
	}
	var timer *time.Timer
	timer = time.AfterFunc(req.UnfreezeTimeout, func() {
		klog.InfoS("The unfreeze timeout passed: thawing the guest's filesystems", "timeout", req.UnfreezeTimeout)
		l.freezeMu.Lock()
		if l.thawTimer == timer {
			l.thawTimer = nil
		}
		l.freezeMu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := l.conn.Thaw(ctx, name); err != nil {
			klog.ErrorS(err, "Thawing the guest's filesystems after the unfreeze timeout")
			return
		}
		l.setFrozen(false)
	})
	l.thawTimer = timer
	return &protocol.Empty{}, nil
}

// Unfreeze thaws the guest's filesystems (the VMI action unfreeze).
func (l *launcher) Unfreeze(ctx context.Context, _ *protocol.Empty) (*protocol.Empty, error) {
	name, _, err := l.actionState(ctx, "unfreeze")
	if err != nil {
		return nil, err
	}
	if !l.hub.get().AgentConnected {
		return nil, status.Error(codes.FailedPrecondition, "VMI does not have guest agent connected: filesystems are thawed through the guest agent")
	}
	l.freezeMu.Lock()
	if l.thawTimer != nil {
		l.thawTimer.Stop()
		l.thawTimer = nil
	}
	l.freezeMu.Unlock()
	if err := l.conn.Thaw(ctx, name); err != nil {
		return nil, fmt.Errorf("thawing the guest's filesystems: %w", err)
	}
	l.setFrozen(false)
	return &protocol.Empty{}, nil
}

// setFrozen records in the domain status whether the guest's filesystems are frozen.
func (l *launcher) setFrozen(frozen bool) {
	l.hub.update(func(st *protocol.DomainStatus) { st.Frozen = frozen })
}
