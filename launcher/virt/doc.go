// Package virt is the launcher's libvirt runtime: it starts and supervises a private
// session-mode libvirtd (one per launcher, running as the launcher's unprivileged user with
// its own XDG directories and host UUID) and drives the launcher's domain through it with
// go-libvirt: start, ACPI shutdown, destroy, pause, resume, reset, state, and libvirt's own
// lifecycle events translated into Vireo's small event vocabulary with human-readable reasons.
//
// The package knows nothing of VMIs or Kubernetes: it takes domain XML built elsewhere
// (launcher/domain) and reports what libvirt says. Domains are started transient
// (virDomainCreateXML): the VMI spec, not libvirt's configuration store, is the source of
// truth; nothing is left in the launcher's directory when a domain ends; a migration source
// that is transient disappears on success without an undefine step; and a migration target
// needs no domain of its own because a peer-to-peer DomainMigratePerform3Params creates the
// (transient) domain on the target during its prepare phase.
package virt
