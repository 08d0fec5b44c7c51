package domain

import (
	"fmt"
	"path/filepath"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// MigrationDisks sorts the writable file disks of the domain for a live migration by target
// device (vda, ...): copied are those in localDir, the launcher's private directory
// (containerDisk overlays, emptyDisks), which the migration copies; shared are those in
// claimsDir, claims, which stay where they are and which both launchers open (Vireo lets such
// a VMI migrate only when its claims are ReadWriteMany: shared storage). Any other writable disk
// is an error: nothing says it is shared. Read-only disks (cloud-init) the target builds itself.
func MigrationDisks(domainXML, localDir, claimsDir string) (copied, shared []string, err error) {
	var dom libvirtxml.Domain
	if err := dom.Unmarshal(domainXML); err != nil {
		return nil, nil, fmt.Errorf("reading the domain's XML: %w", err)
	}
	if dom.Devices == nil {
		return nil, nil, nil
	}
	local, claims := filepath.Clean(localDir)+"/", filepath.Clean(claimsDir)+"/"
	for _, d := range dom.Devices.Disks {
		if d.Device != "disk" || d.ReadOnly != nil || d.Target == nil || d.Source == nil || d.Source.File == nil {
			continue
		}
		switch file := d.Source.File.File; {
		case strings.HasPrefix(file, local):
			copied = append(copied, d.Target.Dev)
		case strings.HasPrefix(file, claims):
			shared = append(shared, d.Target.Dev)
		default:
			return nil, nil, fmt.Errorf("disk %s (%s) is neither the launcher's own nor on a claim: it cannot be migrated", d.Target.Dev, file)
		}
	}
	return copied, shared, nil
}
