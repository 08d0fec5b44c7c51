package netnssetup

import (
	"fmt"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"

	"github.com/vireo-dev/vireo/internal/podnetwork"
)

// TableName is the nftables table (family ip) of the masquerade binding in a launcher Pod.
const TableName = "vireo-masquerade"

// applyRules replaces the namespace's masquerade table in one transaction:
//
//	prerouting (nat):   iifname eth0 [tcp|udp] [dport P] dnat to GUEST
//	postrouting (nat):  ip saddr GUEST oifname eth0 masquerade
//	input (filter):     iifname eth0 tcp ct state new reject with tcp reset
//	                    iifname eth0 udp ct state new reject
//
// Nothing translated to the guest reaches the Pod's own sockets: with every port forwarded
// the input rules see no TCP or UDP from outside at all; with a list, the other ports are
// refused as a closed port would be.
func applyRules(req *podnetwork.Request, layout podnetwork.Layout) error {
	c, err := nftables.New()
	if err != nil {
		return err
	}
	table := &nftables.Table{Family: nftables.TableFamilyIPv4, Name: TableName}
	// Adding before deleting makes the delete succeed on a namespace without the table; the
	// transaction then builds it anew, so the rules are replaced at once.
	c.AddTable(table)
	c.DelTable(table)
	c.AddTable(table)
	pre := c.AddChain(&nftables.Chain{Name: "prerouting", Table: table, Type: nftables.ChainTypeNAT,
		Hooknum: nftables.ChainHookPrerouting, Priority: nftables.ChainPriorityNATDest})
	post := c.AddChain(&nftables.Chain{Name: "postrouting", Table: table, Type: nftables.ChainTypeNAT,
		Hooknum: nftables.ChainHookPostrouting, Priority: nftables.ChainPriorityNATSource})
	input := c.AddChain(&nftables.Chain{Name: "input", Table: table, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookInput, Priority: nftables.ChainPriorityFilter})

	guest := layout.Guest.AsSlice()
	dnat := []expr.Any{
		&expr.Immediate{Register: 1, Data: guest},
		&expr.NAT{Type: expr.NATTypeDestNAT, Family: unix.NFPROTO_IPV4, RegAddrMin: 1},
	}
	if req.AllPorts {
		for _, proto := range []byte{unix.IPPROTO_TCP, unix.IPPROTO_UDP} {
			c.AddRule(&nftables.Rule{Table: table, Chain: pre, Exprs: concat(fromPod(), l4proto(proto), dnat)})
		}
	}
	for _, p := range req.Ports {
		proto, err := protocolNumber(p.Protocol)
		if err != nil {
			return err
		}
		c.AddRule(&nftables.Rule{Table: table, Chain: pre, Exprs: concat(fromPod(), l4proto(proto), destPort(p.Port), dnat)})
	}
	c.AddRule(&nftables.Rule{Table: table, Chain: post, Exprs: concat(
		[]expr.Any{
			&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 12, Len: 4},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: guest},
		},
		ifname(expr.MetaKeyOIFNAME, podnetwork.PodInterface),
		[]expr.Any{&expr.Masq{}})})
	c.AddRule(&nftables.Rule{Table: table, Chain: input, Exprs: concat(fromPod(), l4proto(unix.IPPROTO_TCP), ctNew(),
		[]expr.Any{&expr.Reject{Type: unix.NFT_REJECT_TCP_RST}})})
	c.AddRule(&nftables.Rule{Table: table, Chain: input, Exprs: concat(fromPod(), l4proto(unix.IPPROTO_UDP), ctNew(),
		[]expr.Any{&expr.Reject{Type: unix.NFT_REJECT_ICMP_UNREACH, Code: 3}})}) // ICMP port unreachable
	if err := c.Flush(); err != nil {
		return fmt.Errorf("writing the nftables table %s: %w", TableName, err)
	}
	return nil
}

func protocolNumber(name string) (byte, error) {
	switch name {
	case "tcp":
		return unix.IPPROTO_TCP, nil
	case "udp":
		return unix.IPPROTO_UDP, nil
	}
	return 0, fmt.Errorf("protocol %q cannot be forwarded (tcp or udp)", name)
}

func concat(parts ...[]expr.Any) []expr.Any {
	var out []expr.Any
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func fromPod() []expr.Any { return ifname(expr.MetaKeyIIFNAME, podnetwork.PodInterface) }

// ifname matches the input or output interface's name (NUL-padded to IFNAMSIZ).
func ifname(key expr.MetaKey, name string) []expr.Any {
	data := make([]byte, unix.IFNAMSIZ)
	copy(data, name)
	return []expr.Any{
		&expr.Meta{Key: key, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: data},
	}
}

func l4proto(proto byte) []expr.Any {
	return []expr.Any{
		&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{proto}},
	}
}

// destPort matches the TCP or UDP destination port (both headers keep it at offset 2).
func destPort(port uint16) []expr.Any {
	return []expr.Any{
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: 2, Len: 2},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: binaryutil.BigEndian.PutUint16(port)},
	}
}

func ctNew() []expr.Any {
	return []expr.Any{
		&expr.Ct{Register: 1, Key: expr.CtKeySTATE},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4,
			Mask: binaryutil.NativeEndian.PutUint32(expr.CtStateBitNEW), Xor: binaryutil.NativeEndian.PutUint32(0)},
		&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: binaryutil.NativeEndian.PutUint32(0)},
	}
}
