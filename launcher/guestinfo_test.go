package launcher

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/launcher/protocol"
	"github.com/vireo-dev/vireo/launcher/virt"
)

// TestGuestAgentInfo: libvirt's guest info parameters and the agent's guest-info answer become
// KubeVirt's VirtualMachineInstanceGuestAgentInfo (login times from milliseconds to seconds,
// the time zone as "NAME, OFFSET").
func TestGuestAgentInfo(t *testing.T) {
	params := virt.GuestInfo{
		"hostname": "tiny", "os.id": "vireo-tiny", "os.name": "Vireo tiny", "os.pretty-name": "Vireo tiny test guest",
		"os.version": "1", "os.version-id": "1", "os.kernel-release": "6.1.0-57-amd64", "os.kernel-version": "#1 SMP",
		"os.machine": "x86_64", "timezone.name": "UTC", "timezone.offset": int32(0),
		"user.count": uint32(1), "user.0.name": "root", "user.0.login-time": uint64(1733300000500),
		"fs.count": uint32(1), "fs.0.name": "vda1", "fs.0.mountpoint": "/", "fs.0.fstype": "ext4",
		"fs.0.total-bytes": uint64(1 << 30), "fs.0.used-bytes": uint64(1 << 20), "fs.0.disk.count": uint32(1), "fs.0.disk.0.serial": "root-disk",
	}
	agent := virt.AgentInfo{Version: "7.2.15"}
	agent.SupportedCommands = append(agent.SupportedCommands, struct {
		Name    string `json:"name"`
		Enabled bool   `json:"enabled"`
	}{"guest-ping", true})
	got := guestAgentInfo(params, agent)
	want := v1.VirtualMachineInstanceGuestAgentInfo{
		GAVersion: "7.2.15", Hostname: "tiny", Timezone: "UTC, 0",
		SupportedCommands: []v1.GuestAgentCommandInfo{{Name: "guest-ping", Enabled: true}},
		OS: v1.VirtualMachineInstanceGuestOSInfo{Name: "Vireo tiny", KernelRelease: "6.1.0-57-amd64", Version: "1",
			PrettyName: "Vireo tiny test guest", VersionID: "1", KernelVersion: "#1 SMP", Machine: "x86_64", ID: "vireo-tiny"},
		UserList: []v1.VirtualMachineInstanceGuestOSUser{{UserName: "root", LoginTime: 1733300000.5}},
		FSInfo: v1.VirtualMachineInstanceFileSystemInfo{Filesystems: []v1.VirtualMachineInstanceFileSystem{{
			DiskName: "vda1", MountPoint: "/", FileSystemType: "ext4", UsedBytes: 1 << 20, TotalBytes: 1 << 30,
			Disk: []v1.VirtualMachineInstanceFileSystemDisk{{Serial: "root-disk"}}}}},
	}
	want.APIVersion, want.Kind = "kubevirt.io/v1", "VirtualMachineInstanceGuestAgentInfo"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("guest agent info (-want +got):\n%s", diff)
	}
	if empty := guestAgentInfo(virt.GuestInfo{}, virt.AgentInfo{}); empty.Timezone != "" || empty.UserList != nil {
		t.Errorf("no parameters gave %+v", empty)
	}
}

// TestNameInterfaces: the guest's interface names are matched by MAC address (in either case);
// an interface the agent does not list has no name.
func TestNameInterfaces(t *testing.T) {
	ifaces := []protocol.Interface{{Name: "default", MAC: "02:00:00:aa:bb:cc"}, {Name: "other", MAC: "02:00:00:dd:ee:ff", GuestName: "stale"}}
	nameInterfaces(ifaces, []virt.GuestInterface{{Name: "lo", MAC: "00:00:00:00:00:00"}, {Name: "eth0", MAC: "02:00:00:AA:BB:CC"}})
	if ifaces[0].GuestName != "eth0" || ifaces[1].GuestName != "" {
		t.Errorf("names: %+v", ifaces)
	}
}
