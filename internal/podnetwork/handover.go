package podnetwork

import (
	"encoding/json"
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"

	"github.com/vireo-dev/vireo/internal/fdpass"
)

// TunDevice is the tun/tap control device; the launcher's container gets it from the device
// plugin as TunResourceName.
const TunDevice = "/dev/net/tun"

// TunResourceName is KubeVirt's extended resource for /dev/net/tun, which the launcher
// container of a VMI with a masquerade interface requests: libvirt opens its tap device
// through it.
const TunResourceName = "devices.kubevirt.io/tun"

// handoverMessage accompanies the launcher's descriptors.
type handoverMessage struct {
	Version int `json:"version"`
	// Tun says whether a /dev/net/tun descriptor follows the namespace's.
	Tun bool `json:"tun"`
}

// SendNamespace is the launcher's side of the handover: it sends its own network namespace and
// a fresh /dev/net/tun descriptor (opened in that namespace, so that a tap device created
// through it is created there). Without /dev/net/tun (a Pod that did not request it) the
// namespace goes alone and the helper can only set up a Pod whose tap device exists.
func SendNamespace(conn *net.UnixConn) error {
	ns, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		return fmt.Errorf("opening the launcher's network namespace: %w", err)
	}
	defer ns.Close()
	files := []*os.File{ns}
	tun, err := os.OpenFile(TunDevice, os.O_RDWR|unix.O_CLOEXEC, 0)
	if err == nil {
		defer tun.Close()
		files = append(files, tun)
	}
	msg, _ := json.Marshal(handoverMessage{Version: Version, Tun: tun != nil})
	return fdpass.Send(conn, msg, files...)
}

// ReceiveNamespace is the node agent's side: the launcher's network namespace and, when it
// sent one, its /dev/net/tun descriptor (else nil). The caller closes both.
func ReceiveNamespace(conn *net.UnixConn) (ns, tun *os.File, err error) {
	msg, files, err := fdpass.Receive(conn)
	if err != nil {
		return nil, nil, fmt.Errorf("receiving the launcher's network namespace: %w", err)
	}
	var m handoverMessage
	want := 1
	if err := json.Unmarshal(msg, &m); err == nil && m.Tun {
		want = 2
	}
	if err != nil || m.Version != Version || len(files) != want {
		fdpass.CloseAll(files)
		return nil, nil, fmt.Errorf("the launcher's network handover is malformed (message %q, %d descriptors)", msg, len(files))
	}
	if want == 2 {
		tun = files[1]
	}
	return files[0], tun, nil
}
