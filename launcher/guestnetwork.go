package launcher

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"k8s.io/klog/v2"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/podnetwork"
	"github.com/vireo-dev/vireo/launcher/dhcp"
	"github.com/vireo-dev/vireo/launcher/domain"
	"github.com/vireo-dev/vireo/launcher/protocol"
)

// serveNetworkHandover answers every connection to dir/NetworkSocket with the launcher's
// network namespace and a /dev/net/tun descriptor, until ctx ends. Only the node agent reaches
// the launcher's directory.
func serveNetworkHandover(ctx context.Context, dir string) error {
	path := filepath.Join(dir, protocol.NetworkSocket)
	_ = os.Remove(path)
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return err
	}
	go func() {
		<-ctx.Done()
		l.Close()
	}()
	for {
		conn, err := l.AcceptUnix()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		if err := podnetwork.SendNamespace(conn); err != nil {
			klog.ErrorS(err, "Cannot hand the network namespace to the node agent")
		}
		conn.Close()
	}
}

// startGuestNetwork starts serving the guest DHCP on the bridge the node's network helper
// created (once; it serves until the launcher exits). A VMI without a masquerade interface needs
// none. The node agent sets the network up before it sends the VMI, so a missing bridge is an
// error the agent retries.
func (l *launcher) startGuestNetwork(vmi *v1.VirtualMachineInstance) error {
	req, err := podnetwork.ForVMI(vmi, 0)
	if err != nil || req == nil {
		return err
	}
	layout, err := podnetwork.ParseLayout(req.CIDR)
	if err != nil {
		return err
	}
	bridge, err := net.InterfaceByName(podnetwork.Bridge)
	if err != nil {
		return fmt.Errorf("the Pod's network is not set up yet (no %s): %w", podnetwork.Bridge, err)
	}
	l.dhcpOnce.Do(func() {
		lease := dhcp.Lease{Guest: layout.Guest, Gateway: layout.Gateway, PrefixLen: layout.Network.Bits(),
			MTU: bridge.MTU, Hostname: domain.GuestHostname(vmi)}
		if data, err := os.ReadFile("/etc/resolv.conf"); err == nil {
			lease.DNS, lease.Search = dhcp.ParseResolvConf(data)
		}
		go func() {
			if err := dhcp.Serve(context.Background(), podnetwork.Bridge, lease); err != nil {
				klog.ErrorS(err, "The guest's DHCP server stopped")
			}
		}()
	})
	return nil
}
