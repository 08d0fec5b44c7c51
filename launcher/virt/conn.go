package virt

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	libvirt "github.com/digitalocean/go-libvirt"
	"github.com/digitalocean/go-libvirt/socket/dialers"
)

// ErrNotFound is wrapped by errors about a domain that does not exist (any more: a transient
// domain disappears when it stops).
var ErrNotFound = errors.New("domain not found")

// ErrConnectionLost is wrapped by errors of calls on a connection whose daemon went away.
var ErrConnectionLost = errors.New("connection to libvirtd lost")

// Conn is a connection to the launcher's libvirtd. Its methods honour their context: a call
// that libvirtd does not answer in time returns ctx's error (the RPC itself is abandoned, not
// cancelled: libvirt has no cancellation).
type Conn struct {
	l         *libvirt.Libvirt
	d         *Daemon
	closeOnce sync.Once
}

// Domain identifies a running domain.
type Domain struct {
	// Name is the domain's name.
	Name string
	// UUID is the domain's UUID in its canonical text form.
	UUID string
	// ID is libvirt's id of the running domain.
	ID int
}

func connect(ctx context.Context, d *Daemon) (*Conn, error) {
	timeout := 15 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	l := libvirt.NewWithDialer(dialers.NewLocal(dialers.WithSocket(d.layout.Socket), dialers.WithLocalTimeout(timeout)))
	done := make(chan error, 1)
	go func() { done <- l.ConnectToURI(libvirt.QEMUSession) }()
	select {
	case err := <-done:
		if err != nil {
			return nil, fmt.Errorf("virt: connect to libvirtd at %s: %w", d.layout.Socket, err)
		}
		return &Conn{l: l, d: d}, nil
	case <-ctx.Done():
		go func() {
			if <-done == nil {
				_ = l.Disconnect()
			}
		}()
		return nil, fmt.Errorf("virt: connect to libvirtd at %s: %w", d.layout.Socket, ctx.Err())
	}
}

// Close closes the connection; event channels from Events close too.
func (c *Conn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		if !c.l.IsConnected() {
			return
		}
		err = c.l.Disconnect()
		if err != nil && !c.l.IsConnected() {
			err = nil // the daemon went away meanwhile: nothing left to close
		}
	})
	return err
}

// Disconnected is closed when the connection is lost or closed.
func (c *Conn) Disconnected() <-chan struct{} { return c.l.Disconnected() }

// call runs fn, returning early with ctx's error when ctx ends first, and words fn's error.
func (c *Conn) call(ctx context.Context, op, name string, fn func() error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("virt: %s %q: %w", op, name, err)
	}
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return c.wrap(op, name, err)
	case <-ctx.Done():
		return fmt.Errorf("virt: %s %q: %w", op, name, ctx.Err())
	}
}

func (c *Conn) wrap(op, name string, err error) error {
	switch {
	case err == nil:
		return nil
	case libvirt.IsNotFound(err):
		return fmt.Errorf("virt: %s %q: %w", op, name, ErrNotFound)
	case !c.l.IsConnected():
		if derr := c.d.Err(); derr != nil {
			return fmt.Errorf("virt: %s %q: %w: %w", op, name, ErrConnectionLost, derr)
		}
		return fmt.Errorf("virt: %s %q: %w (%v)", op, name, ErrConnectionLost, err)
	}
	return fmt.Errorf("virt: %s %q: %w", op, name, err)
}

// onDomain looks name up and runs fn on it.
func (c *Conn) onDomain(ctx context.Context, op, name string, fn func(libvirt.Domain) error) error {
	if err := checkDomainName(name); err != nil {
		return err
	}
	return c.call(ctx, op, name, func() error {
		dom, err := c.l.DomainLookupByName(name)
		if err != nil {
			return err
		}
		return fn(dom)
	})
}

// Start creates and boots a transient domain from domainXML (see the package comment for
// why transient). The domain is gone from libvirt once it stops.
func (c *Conn) Start(ctx context.Context, domainXML string) (Domain, error) {
	return c.create(ctx, domainXML, libvirt.DomainNone)
}

// StartPaused is Start with the vCPUs stopped before the guest runs its first instruction
// (libvirt announces Started, then Suspended with reason user); Resume runs it.
func (c *Conn) StartPaused(ctx context.Context, domainXML string) (Domain, error) {
	return c.create(ctx, domainXML, libvirt.DomainStartPaused)
}

func (c *Conn) create(ctx context.Context, domainXML string, flags libvirt.DomainCreateFlags) (Domain, error) {
	var dom libvirt.Domain
	err := c.call(ctx, "start domain", nameOf(domainXML), func() error {
		var err error
		dom, err = c.l.DomainCreateXML(domainXML, flags)
		return err
	})
	if err != nil {
		return Domain{}, err
	}
	return toDomain(dom), nil
}

// Shutdown presses the domain's ACPI power button. It returns once QEMU has delivered the
// press; whether the guest powers off is up to the guest (a guest without ACPI support
// ignores it), so the caller destroys the domain after its grace period.
func (c *Conn) Shutdown(ctx context.Context, name string) error {
	return c.onDomain(ctx, "shut down domain", name, func(d libvirt.Domain) error {
		return c.l.DomainShutdownFlags(d, libvirt.DomainShutdownAcpiPowerBtn)
	})
}

// Destroy stops the domain at once (SIGTERM to QEMU, SIGKILL if it lingers).
func (c *Conn) Destroy(ctx context.Context, name string) error {
	return c.onDomain(ctx, "destroy domain", name, func(d libvirt.Domain) error {
		return c.l.DomainDestroyFlags(d, libvirt.DomainDestroyDefault)
	})
}

// Pause stops the domain's vCPUs.
func (c *Conn) Pause(ctx context.Context, name string) error {
	return c.onDomain(ctx, "pause domain", name, func(d libvirt.Domain) error { return c.l.DomainSuspend(d) })
}

// Resume restarts the vCPUs of a paused domain.
func (c *Conn) Resume(ctx context.Context, name string) error {
	return c.onDomain(ctx, "resume domain", name, func(d libvirt.Domain) error { return c.l.DomainResume(d) })
}

// Reboot presses the domain's ACPI power button and, when the guest has powered off, starts it
// again in the same QEMU (libvirt resets the machine instead of letting QEMU exit): a reboot
// that needs no guest agent, only a guest that handles the power button.
func (c *Conn) Reboot(ctx context.Context, name string) error {
	return c.onDomain(ctx, "reboot domain", name, func(d libvirt.Domain) error {
		return c.l.DomainReboot(d, libvirt.DomainRebootAcpiPowerBtn)
	})
}

// RebootByAgent asks the guest agent to reboot the guest (KubeVirt's soft reboot when an agent
// is connected): no power button needed.
func (c *Conn) RebootByAgent(ctx context.Context, name string) error {
	return c.onDomain(ctx, "reboot domain", name, func(d libvirt.Domain) error {
		return c.l.DomainReboot(d, libvirt.DomainRebootGuestAgent)
	})
}

// Reset resets the domain like a reset button, without a guest shutdown.
func (c *Conn) Reset(ctx context.Context, name string) error {
	return c.onDomain(ctx, "reset domain", name, func(d libvirt.Domain) error { return c.l.DomainReset(d, 0) })
}

// State returns the domain's state and libvirt's reason for it. A transient domain that has
// stopped no longer exists: the error then wraps ErrNotFound.
func (c *Conn) State(ctx context.Context, name string) (State, Reason, error) {
	var st, why int32
	err := c.onDomain(ctx, "get state of domain", name, func(d libvirt.Domain) error {
		var err error
		st, why, err = c.l.DomainGetState(d, 0)
		return err
	})
	if err != nil {
		return StateNoState, ReasonUnknown, err
	}
	s, r := stateOf(st, why)
	return s, r, nil
}

// DomainCapabilities returns libvirt's domain capabilities XML for guests of the host's
// architecture under emulation e (what the domain XML builder may use). The first call on
// a fresh daemon probes QEMU and caches the result in the daemon's directory, which takes
// seconds (about 3.5 s under TCG here) and would otherwise delay the first Start: a
// launcher calls it right after StartDaemon, while it waits for its VMI.
func (c *Conn) DomainCapabilities(ctx context.Context, e Emulation) (string, error) {
	virtType := "qemu"
	if e == EmulationKVM {
		virtType = "kvm"
	}
	var caps string
	err := c.call(ctx, "get domain capabilities for", virtType, func() error {
		var err error
		caps, err = c.l.ConnectGetDomainCapabilities(nil, nil, nil, libvirt.OptString{virtType}, 0)
		return err
	})
	return caps, err
}

// Domains lists the running domains.
func (c *Conn) Domains(ctx context.Context) ([]Domain, error) {
	var doms []libvirt.Domain
	err := c.call(ctx, "list", "domains", func() error {
		var err error
		doms, _, err = c.l.ConnectListAllDomains(1, libvirt.ConnectListDomainsActive)
		return err
	})
	out := make([]Domain, 0, len(doms))
	for _, d := range doms {
		out = append(out, toDomain(d))
	}
	return out, err
}

// destroyAll destroys every running domain, returning the first error.
func (c *Conn) destroyAll(ctx context.Context) error {
	doms, err := c.Domains(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, d := range doms {
		if err := c.Destroy(ctx, d.Name); err != nil && !errors.Is(err, ErrNotFound) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func toDomain(d libvirt.Domain) Domain {
	u := d.UUID
	return Domain{Name: d.Name, ID: int(d.ID),
		UUID: fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])}
}
