package podnetwork

import (
	"encoding/binary"
	"net/netip"
	"testing"
)

// FuzzParseLayout: whatever a user writes in vmNetworkCIDR, a layout is either refused or has
// its gateway and guest inside the network, distinct, and neither the network's own address nor
// its broadcast address.
func FuzzParseLayout(f *testing.F) {
	for _, seed := range []string{"", DefaultCIDR, "10.0.2.0/29", "10.0.2.0/30", "192.168.7.9/24", "fd10:0:2::/120", "10.0.2.0", "0.0.0.0/0", "255.255.255.248/29"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, cidr string) {
		l, err := ParseLayout(cidr)
		if err != nil {
			return
		}
		n := l.Network
		first := n.Addr().As4()
		last := binary.BigEndian.Uint32(first[:]) | (1<<(32-n.Bits()) - 1)
		broadcast := netip.AddrFrom4([4]byte(binary.BigEndian.AppendUint32(nil, last)))
		if !n.Contains(l.Gateway) || !n.Contains(l.Guest) || l.Gateway == l.Guest ||
			l.Gateway == n.Addr() || l.Guest == n.Addr() || l.Gateway == broadcast || l.Guest == broadcast {
			t.Errorf("ParseLayout(%q) = network %s, gateway %s, guest %s (broadcast %s)", cidr, n, l.Gateway, l.Guest, broadcast)
		}
	})
}
