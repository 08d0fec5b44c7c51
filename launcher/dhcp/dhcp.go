// Package dhcp is the launcher's DHCP server for the guest of the masquerade binding: on the
// in-Pod bridge it leases the guest its fixed address (.2 of the guest network) for ever, with
// the gateway as router, the Pod's name servers and search domains, the guest's host name and
// the Pod's MTU, as KubeVirt's launcher does.
package dhcp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/server4"
	"github.com/insomniacslk/dhcp/rfc1035label"
	"k8s.io/klog/v2"
)

// Lease is what the guest is told.
type Lease struct {
	// Guest is the address leased; Gateway the router and server identifier.
	Guest, Gateway netip.Addr
	// PrefixLen is the guest network's prefix length.
	PrefixLen int
	// MTU is the Pod interface's MTU (0: not sent).
	MTU int
	// DNS are the name servers; Search the search domains.
	DNS    []netip.Addr
	Search []string
	// Hostname is the guest's host name ("" for none).
	Hostname string
}

// infiniteLease is the lease time of an address that never expires (RFC 2131 0xffffffff).
const infiniteLease = time.Duration(math.MaxUint32) * time.Second

// Reply answers req: an offer to a discover, an acknowledgement to a request for the leased
// address (a NAK to one for another), nil to anything else.
func (l Lease) Reply(req *dhcpv4.DHCPv4) (*dhcpv4.DHCPv4, error) {
	if req.OpCode != dhcpv4.OpcodeBootRequest {
		return nil, nil
	}
	reply, err := dhcpv4.NewReplyFromRequest(req)
	if err != nil {
		return nil, err
	}
	guest := net.IP(l.Guest.AsSlice())
	switch req.MessageType() {
	case dhcpv4.MessageTypeDiscover:
		reply.UpdateOption(dhcpv4.OptMessageType(dhcpv4.MessageTypeOffer))
	case dhcpv4.MessageTypeRequest:
		asked := req.RequestedIPAddress()
		if asked == nil || asked.IsUnspecified() {
			asked = req.ClientIPAddr
		}
		if asked != nil && !asked.IsUnspecified() && !asked.Equal(guest) {
			reply.UpdateOption(dhcpv4.OptMessageType(dhcpv4.MessageTypeNak))
			reply.UpdateOption(dhcpv4.OptServerIdentifier(l.Gateway.AsSlice()))
			return reply, nil
		}
		reply.UpdateOption(dhcpv4.OptMessageType(dhcpv4.MessageTypeAck))
	default:
		return nil, nil
	}
	reply.YourIPAddr = guest
	reply.ServerIPAddr = l.Gateway.AsSlice()
	reply.UpdateOption(dhcpv4.OptServerIdentifier(l.Gateway.AsSlice()))
	reply.UpdateOption(dhcpv4.OptSubnetMask(net.CIDRMask(l.PrefixLen, 32)))
	reply.UpdateOption(dhcpv4.OptRouter(l.Gateway.AsSlice()))
	reply.UpdateOption(dhcpv4.OptIPAddressLeaseTime(infiniteLease))
	if len(l.DNS) > 0 {
		var ips []net.IP
		for _, a := range l.DNS {
			ips = append(ips, a.AsSlice())
		}
		reply.UpdateOption(dhcpv4.OptDNS(ips...))
	}
	if len(l.Search) > 0 {
		reply.UpdateOption(dhcpv4.OptDomainSearch(&rfc1035label.Labels{Labels: l.Search}))
		reply.UpdateOption(dhcpv4.OptDomainName(l.Search[0]))
	}
	if l.Hostname != "" {
		reply.UpdateOption(dhcpv4.OptHostName(l.Hostname))
	}
	if l.MTU > 0 && l.MTU <= math.MaxUint16 {
		reply.UpdateOption(dhcpv4.OptGeneric(dhcpv4.OptionInterfaceMTU, []byte{byte(l.MTU >> 8), byte(l.MTU)}))
	}
	return reply, nil
}

// Serve answers DHCP on interface iface (bound to it, port 67) until ctx ends.
func Serve(ctx context.Context, iface string, lease Lease) error {
	handler := func(conn net.PacketConn, peer net.Addr, req *dhcpv4.DHCPv4) {
		reply, err := lease.Reply(req)
		if err != nil {
			klog.ErrorS(err, "Cannot answer the guest's DHCP request")
			return
		}
		if reply == nil {
			return
		}
		if _, err := conn.WriteTo(reply.ToBytes(), peer); err != nil {
			klog.ErrorS(err, "Cannot send the guest its DHCP answer", "to", peer)
		}
	}
	srv, err := server4.NewServer(iface, &net.UDPAddr{Port: dhcpv4.ServerPort}, handler)
	if err != nil {
		return fmt.Errorf("serving DHCP on %s: %w", iface, err)
	}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	klog.InfoS("Serving the guest DHCP", "interface", iface, "guest", lease.Guest, "dns", lease.DNS, "search", lease.Search)
	if err := srv.Serve(); err != nil && ctx.Err() == nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}

// ParseResolvConf returns the name servers and search domains of a resolv.conf. Loopback name
// servers are left out: the guest cannot reach the Pod's loopback.
func ParseResolvConf(data []byte) (servers []netip.Addr, search []string) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 || strings.HasPrefix(fields[0], "#") || strings.HasPrefix(fields[0], ";") {
			continue
		}
		switch fields[0] {
		case "nameserver":
			if a, err := netip.ParseAddr(fields[1]); err == nil && a.Is4() && !a.IsLoopback() {
				servers = append(servers, a)
			}
		case "search", "domain":
			search = fields[1:]
		}
	}
	return servers, search
}
