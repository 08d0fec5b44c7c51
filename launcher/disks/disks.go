// Package disks prepares a VMI's volumes on its node before the launcher builds the domain:
// a qcow2 overlay over a cached containerDisk image, a sparse qcow2 for an emptyDisk, a NoCloud
// "cidata" ISO for cloud-init, and the disk.img of a PersistentVolumeClaim. Each function
// returns the domain.DiskSource the domain package attaches.
//
// Everything it creates lies below the per-VMI directory it is given, under names it builds
// itself from volume names that are checked to be DNS-1123 labels, and it creates files only
// exclusively and without following symlinks. Files in places a user could plant a symlink (a
// claim's disk.img, an image in the cache) are opened without following one, and the tools it
// runs are handed the file it opened and checked, not a path. Image formats are detected from
// contents with qemu-img, never from file names, and images that refer to other files
// (backing files, external data files) are refused.
package disks

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/vireo-dev/vireo/launcher/domain"
)

// Subdirectories of the per-VMI directory, one per kind of prepared volume.
const (
	emptyDiskDir     = "empty-disks"
	containerDiskDir = "container-disks"
	cloudInitDir     = "cloud-init"
)

// PVCImageName is the file that holds the disk image in a filesystem-mode PersistentVolumeClaim
// (KubeVirt's convention, which Vireo's importer follows).
const PVCImageName = "disk.img"

// sectorSize is what emptyDisk capacities are rounded up to.
const sectorSize = 512

// Preparer prepares the volumes of one VMI.
type Preparer struct {
	// Dir is the per-VMI directory the launcher was given, an absolute path; everything the
	// Preparer creates is below it.
	Dir string
	// QEMUImg is the qemu-img binary; "qemu-img" from PATH when empty.
	QEMUImg string
	// GenISOImage is the genisoimage binary; "genisoimage" from PATH when empty.
	GenISOImage string
}

// qemuImg returns the qemu-img binary to run.
func (p *Preparer) qemuImg() string {
	if p.QEMUImg == "" {
		return "qemu-img"
	}
	return p.QEMUImg
}

// genISOImage returns the genisoimage binary to run.
func (p *Preparer) genISOImage() string {
	if p.GenISOImage == "" {
		return "genisoimage"
	}
	return p.GenISOImage
}

// checkVolumeName refuses a volume name that is not a DNS-1123 label: names become file names.
func checkVolumeName(volume string) error {
	if msgs := validation.IsDNS1123Label(volume); len(msgs) > 0 {
		return fmt.Errorf("volume name %q cannot name a file: %s", volume, strings.Join(msgs, "; "))
	}
	return nil
}

// subdir opens (creating it when missing) the subdirectory name of the per-VMI directory.
func (p *Preparer) subdir(name string) (*dirHandle, error) {
	root, err := openDir(p.Dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return root.subdir(name)
}

// EmptyDisk creates the sparse qcow2 image of emptyDisk volume of the given capacity (rounded
// up to whole 512-byte sectors), or reuses the one an earlier call created.
func (p *Preparer) EmptyDisk(ctx context.Context, volume string, capacity resource.Quantity) (domain.DiskSource, error) {
	if err := checkVolumeName(volume); err != nil {
		return domain.DiskSource{}, err
	}
	size := capacity.Value()
	if size <= 0 {
		return domain.DiskSource{}, fmt.Errorf("emptyDisk volume %q: capacity %s must be greater than zero", volume, capacity.String())
	}
	size = (size + sectorSize - 1) / sectorSize * sectorSize
	dir, err := p.subdir(emptyDiskDir)
	if err != nil {
		return domain.DiskSource{}, err
	}
	defer dir.Close()
	name := volume + ".qcow2"
	exists, err := p.existingQCOW2(ctx, dir, name, size, "")
	if err != nil {
		return domain.DiskSource{}, err
	}
	if !exists {
		if err := p.createQCOW2(ctx, dir, name, size, "", ""); err != nil {
			return domain.DiskSource{}, fmt.Errorf("emptyDisk volume %q: %w", volume, err)
		}
	}
	return fileSource(filepath.Join(dir.path, name), domain.FormatQCOW2, false), nil
}

// ContainerDisk creates the per-VMI qcow2 overlay of containerDisk volume, so that the guest
// writes to the overlay and the image is never written. root is where the launcher Pod mounts
// the image (an image volume: read-only, and fixed for the Pod's life), imagePath the VMI's
// containerDisk.path: the disk file inside the image, by default the first regular file under
// /disk/. The image is the user's, so the path is walked without following a symlink; the
// disk's format is detected from its contents, and an image that refers to other files is
// refused.
func (p *Preparer) ContainerDisk(ctx context.Context, volume, root, imagePath string) (domain.DiskSource, error) {
	if err := checkVolumeName(volume); err != nil {
		return domain.DiskSource{}, err
	}
	rel, err := containerDiskFile(root, imagePath)
	if err != nil {
		return domain.DiskSource{}, fmt.Errorf("containerDisk volume %q: %w", volume, err)
	}
	imageFile := filepath.Join(root, rel)
	base, err := openBeneath(root, rel)
	if err != nil {
		return domain.DiskSource{}, fmt.Errorf("containerDisk volume %q: %w", volume, readableHint(err))
	}
	defer base.Close()
	info, err := p.info(ctx, base)
	if err != nil {
		return domain.DiskSource{}, fmt.Errorf("containerDisk volume %q: %w", volume, err)
	}
	if err := checkStandalone(info, imageFile); err != nil {
		return domain.DiskSource{}, fmt.Errorf("containerDisk volume %q: %w", volume, err)
	}
	dir, err := p.subdir(containerDiskDir)
	if err != nil {
		return domain.DiskSource{}, err
	}
	defer dir.Close()
	name := volume + ".qcow2"
	exists, err := p.existingQCOW2(ctx, dir, name, 0, imageFile)
	if err != nil {
		return domain.DiskSource{}, err
	}
	if !exists {
		if err := p.createQCOW2(ctx, dir, name, 0, imageFile, info.Format); err != nil {
			return domain.DiskSource{}, fmt.Errorf("containerDisk volume %q: %w", volume, err)
		}
	}
	return fileSource(filepath.Join(dir.path, name), domain.FormatQCOW2, false), nil
}

// PersistentVolume returns the disk.img of a filesystem-mode PersistentVolumeClaim (or
// DataVolume) mounted at mountDir, with its format detected from its contents. The claim's
// contents are the user's, so a symlink in place of disk.img is refused, as are images that
// refer to other files; the file checked is the file the domain opens (held at slot, the
// volume's index in spec.volumes: see hold). readOnly is the volume's readOnly flag.
func (p *Preparer) PersistentVolume(ctx context.Context, mountDir string, readOnly bool, slot int) (domain.DiskSource, error) {
	f, err := openBeneath(mountDir, PVCImageName)
	if err != nil {
		return domain.DiskSource{}, err
	}
	defer f.Close()
	info, err := p.info(ctx, f)
	if err != nil {
		return domain.DiskSource{}, err
	}
	if err := checkStandalone(info, f.Name()); err != nil {
		return domain.DiskSource{}, err
	}
	path, err := hold(f, slot)
	if err != nil {
		return domain.DiskSource{}, err
	}
	return domain.DiskSource{Path: path, Format: info.Format, ReadOnly: readOnly, DirectIO: heldSupportsDirectIO(path)}, nil
}

// fileSource describes a prepared image file.
func fileSource(path, format string, readOnly bool) domain.DiskSource {
	return domain.DiskSource{Path: path, Format: format, ReadOnly: readOnly, DirectIO: SupportsDirectIO(path)}
}
