package deviceplugin

import (
	"context"
	"os"
	"time"

	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/vireo-dev/vireo/internal/podnetwork"
)

const (
	// tunSysfs is where the kernel lists the tun device when the tun module is loaded.
	tunSysfs = "/sys/class/misc/tun"
	// tunDevices is KubeVirt's count of devices.kubevirt.io/tun per node.
	tunDevices = 1000
)

// ServeTun serves devices.kubevirt.io/tun to the kubelet until ctx ends (not at all when dir
// is empty); the devices are healthy while the kernel has the tun device.
func ServeTun(ctx context.Context, dir string) error {
	if dir == "" {
		<-ctx.Done()
		return ctx.Err()
	}
	p := &Plugin{
		Resource: podnetwork.TunResourceName, Dir: dir, Socket: "vireo-tun.sock", Count: tunDevices,
		Devices: []*pluginapi.DeviceSpec{{ContainerPath: podnetwork.TunDevice, HostPath: podnetwork.TunDevice, Permissions: "rw"}},
		Health: func() (bool, string) {
			if _, err := os.Stat(tunSysfs); err != nil {
				return false, "the kernel has no tun device (module tun not loaded): " + err.Error()
			}
			return true, ""
		},
		HealthInterval: time.Minute, CheckInterval: 2 * time.Second,
	}
	return p.Run(ctx)
}
