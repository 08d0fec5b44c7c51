package launcherpod

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/clusterconfig"
	"github.com/vireo-dev/vireo/internal/podnetwork"
	"github.com/vireo-dev/vireo/kvm"
)

// Launcher arguments and environment that carry the cluster's emulation setting and the node.
const (
	// UseEmulationFlag tells the launcher whether its guest may run under software emulation
	// when the node has no usable KVM.
	UseEmulationFlag = "--use-emulation"
	// UseEmulationSourceFlag names where the setting comes from, for the launcher's refusal.
	UseEmulationSourceFlag = "--use-emulation-source"
	// NodeNameEnv is the launcher's node (spec.nodeName, through the downward API), for its
	// refusal to run a guest under emulation.
	NodeNameEnv = "NODE_NAME"
)

// emulation is the setting a Pod rendered now gets: opts.Emulation's answer, read once, or nil
// when opts has none.
func emulation(opts Options) *clusterconfig.EmulationSetting {
	if opts.Emulation == nil {
		return nil
	}
	e := opts.Emulation()
	return &e
}

// emulationArgs are the launcher's arguments for the emulation setting e; none without a
// setting (the launcher then allows emulation, as launchers did before the setting).
func emulationArgs(e *clusterconfig.EmulationSetting) []string {
	if e == nil {
		return nil
	}
	return []string{UseEmulationFlag + "=" + strconv.FormatBool(e.Allowed), UseEmulationSourceFlag + "=" + e.Source}
}

// requestKVM makes the launcher container ask for one devices.kubevirt.io/kvm when its guest
// must not run under emulation (KubeVirt's rule): the scheduler then places it only on a node
// whose node agent advertises usable KVM, and the kubelet hands the container /dev/kvm. A
// VMI that allows emulation asks for nothing and runs under TCG where KVM is missing.
func requestKVM(res *corev1.ResourceRequirements, e *clusterconfig.EmulationSetting) {
	if e == nil || e.Allowed {
		return
	}
	one := resource.MustParse("1")
	for _, list := range []*corev1.ResourceList{&res.Requests, &res.Limits} {
		if *list == nil {
			*list = corev1.ResourceList{}
		}
		(*list)[kvm.ResourceName] = one
	}
}

// requestTun makes the launcher container of a VMI with a masquerade interface ask for one
// devices.kubevirt.io/tun, as KubeVirt's does: the kubelet hands it /dev/net/tun, through which
// libvirt opens the tap device the node's network helper made.
func requestTun(res *corev1.ResourceRequirements, vmi *v1.VirtualMachineInstance) {
	if req, err := podnetwork.ForVMI(vmi, 0); err != nil || req == nil {
		return
	}
	one := resource.MustParse("1")
	for _, list := range []*corev1.ResourceList{&res.Requests, &res.Limits} {
		if *list == nil {
			*list = corev1.ResourceList{}
		}
		(*list)[podnetwork.TunResourceName] = one
	}
}
