package virt

import (
	"context"
	"encoding/json"
	"fmt"

	libvirt "github.com/digitalocean/go-libvirt"
)

// agentTimeoutSeconds bounds libvirt's wait for the guest agent's answer.
const agentTimeoutSeconds = 5

// GuestInfo is what libvirt's virDomainGetGuestInfo returns from the guest agent: typed
// parameters by name ("os.id", "hostname", "user.0.name", "fs.0.mountpoint", ...).
type GuestInfo map[string]any

// AgentInfo is the guest agent's own guest-info answer: its version and commands.
type AgentInfo struct {
	Version           string `json:"version"`
	SupportedCommands []struct {
		Name    string `json:"name"`
		Enabled bool   `json:"enabled"`
	} `json:"supported_commands"`
}

// GuestInfo asks the guest agent of the domain for its operating system, host name, time
// zone, users and filesystems. It fails when no agent is connected.
func (c *Conn) GuestInfo(ctx context.Context, name string) (GuestInfo, error) {
	out := GuestInfo{}
	err := c.onDomain(ctx, "ask the guest agent of", name, func(d libvirt.Domain) error {
		types := libvirt.DomainGuestInfoUsers | libvirt.DomainGuestInfoOs | libvirt.DomainGuestInfoTimezone |
			libvirt.DomainGuestInfoHostname | libvirt.DomainGuestInfoFilesystem
		params, err := c.l.DomainGetGuestInfo(d, uint32(types), 0)
		if err != nil {
			return err
		}
		for _, p := range params {
			out[p.Field] = p.Value.I
		}
		return nil
	})
	return out, err
}

// Freeze freezes the guest's filesystems through its agent and returns how many it froze.
func (c *Conn) Freeze(ctx context.Context, name string) (int, error) {
	n := 0
	err := c.onDomain(ctx, "freeze the filesystems of", name, func(d libvirt.Domain) error {
		frozen, err := c.l.DomainFsfreeze(d, nil, 0)
		n = int(frozen)
		return err
	})
	return n, err
}

// Thaw thaws the guest's filesystems through its agent.
func (c *Conn) Thaw(ctx context.Context, name string) error {
	return c.onDomain(ctx, "thaw the filesystems of", name, func(d libvirt.Domain) error {
		_, err := c.l.DomainFsthaw(d, nil, 0)
		return err
	})
}

// GuestInterface is one network interface as the guest agent sees it.
type GuestInterface struct {
	// Name is the guest's name of the interface, such as eth0.
	Name string
	// MAC is its hardware address.
	MAC string
	// IPs are its addresses.
	IPs []string
}

// GuestInterfaces asks the guest agent for the guest's network interfaces.
func (c *Conn) GuestInterfaces(ctx context.Context, name string) ([]GuestInterface, error) {
	var out []GuestInterface
	err := c.onDomain(ctx, "ask the guest agent of", name, func(d libvirt.Domain) error {
		ifaces, err := c.l.DomainInterfaceAddresses(d, uint32(libvirt.DomainInterfaceAddressesSrcAgent), 0)
		if err != nil {
			return err
		}
		for _, i := range ifaces {
			g := GuestInterface{Name: i.Name}
			if len(i.Hwaddr) > 0 {
				g.MAC = i.Hwaddr[0]
			}
			for _, a := range i.Addrs {
				g.IPs = append(g.IPs, a.Addr)
			}
			out = append(out, g)
		}
		return nil
	})
	return out, err
}

// FreezeStatus is the agent's guest-fsfreeze-status: "frozen" or "thawed".
func (c *Conn) FreezeStatus(ctx context.Context, name string) (string, error) {
	return agentCommand[string](ctx, c, name, "guest-fsfreeze-status", nil, agentTimeoutSeconds)
}

// AgentInfo asks the guest agent for its version and commands (QEMU's guest-info command).
func (c *Conn) AgentInfo(ctx context.Context, name string) (AgentInfo, error) {
	return agentCommand[AgentInfo](ctx, c, name, "guest-info", nil, agentTimeoutSeconds)
}

// agentCommand sends the guest agent of the domain a command with args (nil: none) through
// libvirt, waiting timeoutSeconds for the answer, and decodes the answer's "return".
func agentCommand[T any](ctx context.Context, c *Conn, name, command string, args any, timeoutSeconds int32) (T, error) {
	var answer struct {
		Return T `json:"return"`
	}
	err := c.onDomain(ctx, "ask the guest agent of", name, func(d libvirt.Domain) error {
		req := map[string]any{"execute": command}
		if args != nil {
			req["arguments"] = args
		}
		cmd, err := json.Marshal(req)
		if err != nil {
			return err
		}
		res, err := c.l.QEMUDomainAgentCommand(d, string(cmd), timeoutSeconds, 0)
		if err != nil {
			return err
		}
		if len(res) == 0 {
			return fmt.Errorf("the guest agent answered %s with nothing", command)
		}
		if err := json.Unmarshal([]byte(res[0]), &answer); err != nil {
			return fmt.Errorf("the guest agent's %s answer: %w", command, err)
		}
		return nil
	})
	return answer.Return, err
}
