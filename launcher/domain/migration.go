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
// claimsDir or in heldDir (claims, which the launcher holds open and QEMU opens through
// /proc/<pid>/fd), which stay where they are and which both launchers open (Vireo lets such
// a VMI migrate only when its claims are ReadWriteMany: shared storage). Any other writable disk
// is an error: nothing says it is shared. Read-only disks (cloud-init) the target builds itself.
func MigrationDisks(domainXML, localDir, claimsDir, heldDir string) (copied, shared []string, err error) {
	var dom libvirtxml.Domain
	if err := dom.Unmarshal(domainXML); err != nil {
		return nil, nil, fmt.Errorf("reading the domain's XML: %w", err)
	}
	if dom.Devices == nil {
		return nil, nil, nil
	}
	local, claims, heldFiles := filepath.Clean(localDir)+"/", filepath.Clean(claimsDir)+"/", filepath.Clean(heldDir)+"/"
	for _, d := range dom.Devices.Disks {
		if d.Device != "disk" || d.ReadOnly != nil || d.Target == nil || d.Source == nil || d.Source.File == nil {
			continue
		}
		switch file := d.Source.File.File; {
		case strings.HasPrefix(file, local):
			copied = append(copied, d.Target.Dev)
		case strings.HasPrefix(file, claims), strings.HasPrefix(file, heldFiles):
			shared = append(shared, d.Target.Dev)
		default:
			return nil, nil, fmt.Errorf("disk %s (%s) is neither the launcher's own nor on a claim: it cannot be migrated", d.Target.Dev, file)
		}
	}
	return copied, shared, nil
}

// PinBackingChains gives every disk of a migration's destination XML (migratableXML) the
// backing chain the running domain has (liveXML, where libvirt records the chain it detected at
// the start; the migratable XML leaves detected chains out). Without it the target's libvirt
// would detect the chain from its own copy of the disk, and a disk whose chain the XML states
// would be opened with another one than the guest runs on. A containerDisk's image is mounted
// at the same path in every launcher Pod (an image volume, which the target Pod mounts by the
// digest its source runs), so the pinned chain names the same file on both sides. Disks that
// already state their chain keep it.
func PinBackingChains(migratableXML, liveXML string) (string, error) {
	var mig, live libvirtxml.Domain
	if err := mig.Unmarshal(migratableXML); err != nil {
		return "", fmt.Errorf("reading the domain's migratable XML: %w", err)
	}
	if err := live.Unmarshal(liveXML); err != nil {
		return "", fmt.Errorf("reading the domain's live XML: %w", err)
	}
	if mig.Devices == nil || live.Devices == nil {
		return migratableXML, nil
	}
	chains := map[string]*libvirtxml.DomainDiskBackingStore{}
	for _, d := range live.Devices.Disks {
		if d.Target != nil && d.BackingStore != nil && d.BackingStore.Source != nil {
			chains[d.Target.Dev] = withoutIndexes(d.BackingStore)
		}
	}
	pinned := false
	for i := range mig.Devices.Disks {
		d := &mig.Devices.Disks[i]
		if d.Target == nil || d.BackingStore != nil || chains[d.Target.Dev] == nil {
			continue
		}
		d.BackingStore, pinned = chains[d.Target.Dev], true
	}
	if !pinned {
		return migratableXML, nil
	}
	return mig.Marshal()
}

// withoutIndexes copies a backing chain without libvirt's node indexes, which belong to the
// running domain, not to its definition.
func withoutIndexes(b *libvirtxml.DomainDiskBackingStore) *libvirtxml.DomainDiskBackingStore {
	if b == nil {
		return nil
	}
	c := *b
	c.Index = 0
	c.BackingStore = withoutIndexes(b.BackingStore)
	return &c
}
