package e2e

import (
	"testing"
	"time"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// TestGuestInterfaceNames: once the guest agent connects, status.interfaces names the guest's
// own interface (interfaceName eth0, infoSource "domain, guest-agent", as KubeVirt reports it)
// and still gives the Pod's address, at which masquerade reaches the guest.
func TestGuestInterfaceNames(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	applyExample(t, ns, "vmi-tiny.yaml")
	vmi := waitVMI(t, ns, "tiny", 2*time.Minute, "interfaces[0] named eth0 by the guest agent", func(v *v1.VirtualMachineInstance) bool {
		return len(v.Status.Interfaces) == 1 && v.Status.Interfaces[0].InterfaceName == "eth0" &&
			v.Status.Interfaces[0].InfoSource == "domain, guest-agent"
	})
	iface := vmi.Status.Interfaces[0]
	if iface.Name != "default" || iface.IP == "" || iface.MAC == "" {
		t.Errorf("interface %+v: want the spec's name, the Pod's address and the MAC", iface)
	}
}
