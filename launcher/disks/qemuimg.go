package disks

import (
	"context"
	"fmt"
	"os"

	"github.com/vireo-dev/vireo/internal/qemuimg"
	"github.com/vireo-dev/vireo/launcher/domain"
)

// childFD is the path under which a child process sees the first of its extra files. Tools
// are handed files this way, so that they work on exactly the file Vireo opened and checked,
// never on whatever a path might lead to a moment later.
var childFD = qemuimg.FD(0)

// imageInfo is what qemu-img info says of an image.
type imageInfo = qemuimg.Info

// run runs tool with args, handing it extra as its file descriptor 3, and returns its
// standard output; a failure carries the tool's standard error.
func run(ctx context.Context, extra *os.File, tool string, args ...string) ([]byte, error) {
	var files []*os.File
	if extra != nil {
		files = []*os.File{extra}
	}
	return qemuimg.Run(ctx, tool, files, args...)
}

// info detects the format of the open image f from its contents (never its name). It does not
// take the image's lock, so an image another QEMU has open, as on a migration's source, can be
// inspected.
func (p *Preparer) info(ctx context.Context, f *os.File) (*imageInfo, error) {
	info, err := qemuimg.ReadInfo(ctx, p.qemuImg(), f, "", true)
	if err != nil {
		return nil, fmt.Errorf("detecting the format of %s: %w", f.Name(), err)
	}
	return info, nil
}

// checkStandalone refuses an image Vireo will not attach or base an overlay on: formats other
// than raw and qcow2, and images that refer to other files (a backing file, an external data
// file). Such references are paths the image's author chose, and QEMU would open them on the
// node.
func checkStandalone(info *imageInfo, name string) error {
	if info.Format != domain.FormatRaw && info.Format != domain.FormatQCOW2 {
		return fmt.Errorf("%s is a %s image; Vireo attaches raw and qcow2 images only (convert it with qemu-img convert -O qcow2)", name, info.Format)
	}
	switch kind, other := info.OtherFile(); kind {
	case "":
		return nil
	case "backing file":
		return fmt.Errorf("%s is a %s image with backing file %q; Vireo does not follow backing files in images (flatten it with qemu-img convert)", name, info.Format, other)
	default:
		return fmt.Errorf("%s is a %s image with %s %q; Vireo does not follow %ss", name, info.Format, kind, other, kind)
	}
}

// createQCOW2 creates the qcow2 image name in dir through a temporary file, so that a crash
// never leaves a half-written image under the final name: an empty image of size bytes, or,
// with a backing image, an overlay of it (size 0 takes the backing image's size).
func (p *Preparer) createQCOW2(ctx context.Context, dir *dirHandle, name string, size int64, backing, backingFormat string) error {
	tmp := name + ".tmp"
	dir.remove(tmp)
	f, err := dir.createExclusive(tmp)
	if err != nil {
		return err
	}
	defer f.Close()
	args := []string{"create", "-q", "-f", domain.FormatQCOW2}
	if backing != "" {
		args = append(args, "-b", backing, "-F", backingFormat)
	}
	args = append(args, childFD)
	if size > 0 {
		args = append(args, fmt.Sprint(size))
	}
	if _, err := run(ctx, f, p.qemuImg(), args...); err != nil {
		dir.remove(tmp)
		return err
	}
	if err := f.Sync(); err != nil {
		dir.remove(tmp)
		return err
	}
	return dir.rename(tmp, name)
}

// existingQCOW2 reports whether name in dir is already a qcow2 image over backing (none when
// empty) and, when size is not 0, of that size, as an earlier call for the same volume left
// it; anything else there is an error.
func (p *Preparer) existingQCOW2(ctx context.Context, dir *dirHandle, name string, size int64, backing string) (bool, error) {
	exists, err := dir.existingFile(name)
	if err != nil || !exists {
		return false, err
	}
	f, err := openBeneath(dir.path, name)
	if err != nil {
		return false, err
	}
	defer f.Close()
	info, err := p.info(ctx, f)
	if err != nil {
		return false, err
	}
	if info.Format != domain.FormatQCOW2 || info.BackingFilename != backing || (size > 0 && info.VirtualSize != size) {
		return false, fmt.Errorf("%s exists but is not the image Vireo would create there (format %s, size %d, backing file %q); remove it",
			f.Name(), info.Format, info.VirtualSize, info.BackingFilename)
	}
	return true, nil
}
