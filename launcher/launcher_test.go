package launcher

import (
	"testing"

	"github.com/vireo-dev/vireo/launcher/virt"
)

// TestOwnDomain: the launcher follows only its VMI's domain ("<namespace>_<name>"); a domain
// someone else defined in its libvirtd, even one named like the VMI in another namespace, is
// not the VMI's.
func TestOwnDomain(t *testing.T) {
	l := &launcher{opts: &Options{Namespace: "ns1", Name: "testvm"}}
	for domain, want := range map[string]bool{"ns1_testvm": true, "other": false, "ns2_testvm": false, "ns1_testvm2": false, "": false} {
		if got := l.ownDomain(virt.Event{Domain: domain, Kind: virt.EventStopped}); got != want {
			t.Errorf("ownDomain(%q) = %v, want %v", domain, got, want)
		}
	}
}
