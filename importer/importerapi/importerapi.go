// Package importerapi names what vireo-controller and vireo-importer agree on about an importer
// Pod, besides the upload protocol (package uploadapi): the file an import leaves on the volume,
// the exit code of a failure retrying cannot mend, the progress metric the controller reads,
// and how much of a volume the disk may use. It links nothing of the importer itself (no
// registry client, no decompressors), so the controller does not either.
package importerapi

import (
	"fmt"
	"math"
)

// DiskName is the file an import leaves in the target directory, as CDI does on a
// Filesystem-mode volume.
const DiskName = "disk.img"

// ExitPermanent is the importer's exit code for a failure that retrying cannot mend (a 404, a
// checksum mismatch, an image larger than the volume); other failures exit 1.
const ExitPermanent = 2

// ProgressMetric is the importer's progress in percent, CDI's metric name; the DataVolume
// controller reads it from the importer Pod into status.progress.
const ProgressMetric = "kubevirt_cdi_import_progress_total"

// sizeAlignment is the unit the usable size is rounded down to.
const sizeAlignment = 1 << 20

// UsableSize is the part of a volume of capacity bytes a disk image may use when overhead
// (a fraction below 1) is kept for the file system: (1 - overhead) * capacity, rounded up to
// a byte and then down to a MiB, as KubeVirt and CDI compute it.
func UsableSize(capacity int64, overhead float64) (int64, error) {
	if capacity <= 0 {
		return 0, fmt.Errorf("the volume's capacity must be positive, not %d bytes", capacity)
	}
	if overhead < 0 || overhead >= 1 || math.IsNaN(overhead) {
		return 0, fmt.Errorf("the filesystem overhead must be at least 0 and below 1, not %v", overhead)
	}
	usable := int64(math.Ceil((1 - overhead) * float64(capacity)))
	usable -= usable % sizeAlignment
	if usable <= 0 {
		return 0, fmt.Errorf("a volume of %d bytes with filesystem overhead %v leaves no usable MiB", capacity, overhead)
	}
	return usable, nil
}
