package dhcp

import (
	"net"
	"net/netip"
	"slices"
	"testing"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

func testLease() Lease {
	return Lease{Guest: netip.MustParseAddr("10.0.2.2"), Gateway: netip.MustParseAddr("10.0.2.1"), PrefixLen: 24, MTU: 1450,
		DNS: []netip.Addr{netip.MustParseAddr("10.96.0.10")}, Search: []string{"ns.svc.cluster.local", "cluster.local"}, Hostname: "vm1"}
}

func TestDiscoverGetsTheGuestAddress(t *testing.T) {
	mac, _ := net.ParseMAC("02:11:22:33:44:55")
	req, err := dhcpv4.NewDiscovery(mac)
	if err != nil {
		t.Fatal(err)
	}
	reply, err := testLease().Reply(req)
	if err != nil || reply == nil {
		t.Fatalf("Reply: %v, %v", reply, err)
	}
	if reply.MessageType() != dhcpv4.MessageTypeOffer || !reply.YourIPAddr.Equal(net.IPv4(10, 0, 2, 2)) {
		t.Errorf("offer = %s of %v", reply.MessageType(), reply.YourIPAddr)
	}
	if r := reply.Router(); len(r) != 1 || !r[0].Equal(net.IPv4(10, 0, 2, 1)) {
		t.Errorf("router = %v", r)
	}
	if m := reply.SubnetMask(); m.String() != "ffffff00" {
		t.Errorf("mask = %v", m)
	}
	if d := reply.DNS(); len(d) != 1 || !d[0].Equal(net.IPv4(10, 96, 0, 10)) {
		t.Errorf("dns = %v", d)
	}
	if s := reply.DomainSearch(); s == nil || !slices.Equal(s.Labels, []string{"ns.svc.cluster.local", "cluster.local"}) {
		t.Errorf("search = %v", s)
	}
	if h := reply.HostName(); h != "vm1" {
		t.Errorf("hostname = %q", h)
	}
	if mtu := reply.Options.Get(dhcpv4.OptionInterfaceMTU); len(mtu) != 2 || int(mtu[0])<<8|int(mtu[1]) != 1450 {
		t.Errorf("mtu option = %v", mtu)
	}
	if lt := reply.IPAddressLeaseTime(0); lt != infiniteLease {
		t.Errorf("lease time = %v, want infinite", lt)
	}
}

func TestRequestOfAnotherAddressIsRefused(t *testing.T) {
	mac, _ := net.ParseMAC("02:11:22:33:44:55")
	offer, _ := dhcpv4.NewReplyFromRequest(mustDiscover(t, mac))
	offer.YourIPAddr = net.IPv4(10, 0, 2, 2)
	offer.UpdateOption(dhcpv4.OptServerIdentifier(net.IPv4(10, 0, 2, 1)))
	req, err := dhcpv4.NewRequestFromOffer(offer)
	if err != nil {
		t.Fatal(err)
	}
	if reply, _ := testLease().Reply(req); reply == nil || reply.MessageType() != dhcpv4.MessageTypeAck {
		t.Errorf("request of the leased address: %v", reply)
	}
	req.UpdateOption(dhcpv4.OptRequestedIPAddress(net.IPv4(10, 0, 2, 9)))
	if reply, _ := testLease().Reply(req); reply == nil || reply.MessageType() != dhcpv4.MessageTypeNak {
		t.Errorf("request of another address: %v, want a NAK", reply)
	}
}

func mustDiscover(t *testing.T, mac net.HardwareAddr) *dhcpv4.DHCPv4 {
	d, err := dhcpv4.NewDiscovery(mac)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestParseResolvConf(t *testing.T) {
	servers, search := ParseResolvConf([]byte("# comment\nnameserver 127.0.0.53\nnameserver 10.96.0.10\nnameserver fd00::1\nsearch a.svc.cluster.local svc.cluster.local\noptions ndots:5\n"))
	if len(servers) != 1 || servers[0].String() != "10.96.0.10" {
		t.Errorf("servers = %v; loopback and IPv6 left out", servers)
	}
	if !slices.Equal(search, []string{"a.svc.cluster.local", "svc.cluster.local"}) {
		t.Errorf("search = %v", search)
	}
}
