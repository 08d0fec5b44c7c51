package deviceplugin

import (
	"context"
	"time"

	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/vireo-dev/vireo/kvm"
)

// kvmDevices is how many launcher containers may hold devices.kubevirt.io/kvm at once on a
// node: KubeVirt's figure, so that kubectl describe node shows what it shows under KubeVirt.
const kvmDevices = 1000

// ServeKVM serves devices.kubevirt.io/kvm to the kubelet until ctx ends (not at
// all when dir is empty). The devices are healthy only where the node's KVM can run ordinary
// guests, so launcher Pods that need KVM are scheduled only there.
func ServeKVM(ctx context.Context, dir string) error {
	if dir == "" {
		<-ctx.Done()
		return ctx.Err()
	}
	p := &Plugin{
		Resource: kvm.ResourceName, Dir: dir, Socket: "vireo-kvm.sock", Count: kvmDevices,
		Devices: []*pluginapi.DeviceSpec{{ContainerPath: kvm.DevicePath, HostPath: kvm.DevicePath, Permissions: "rw"}},
		Health:  func() (bool, string) { return kvm.NodeUsable(kvm.SysfsPath, kvm.CPUInfoPath) },
		// KVM's usability changes only when a module is loaded or unloaded.
		HealthInterval: time.Minute, CheckInterval: 2 * time.Second,
	}
	return p.Run(ctx)
}
