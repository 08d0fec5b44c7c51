package importer

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/vireo-dev/vireo/importer/importerapi"
)

// partName is the file an import writes before it is complete.
const partName = importerapi.DiskName + ".part"

// diskMode is disk.img's file mode: the guest's QEMU, in the volume's group, reads and writes it.
const diskMode fs.FileMode = 0o660

// target is an import's output: disk.img.part, renamed to disk.img on success.
type target struct {
	dir       string
	part      *os.File
	committed bool
}

// openTarget creates a fresh disk.img.part in dir. It refuses a symbolic link (or anything
// but a regular file) at disk.img or disk.img.part rather than follow it, and replaces a
// regular disk.img.part an interrupted import left.
func openTarget(dir string) (*target, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, permanentf("the target directory: %w", err)
	}
	if !st.IsDir() {
		return nil, permanentf("the target %s is not a directory", dir)
	}
	for _, name := range []string{importerapi.DiskName, partName} {
		if err := checkRegular(filepath.Join(dir, name)); err != nil {
			return nil, err
		}
	}
	partPath := filepath.Join(dir, partName)
	if err := os.Remove(partPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, permanentf("removing a leftover %s: %w", partPath, err)
	}
	// O_EXCL fails on anything at the path, a symbolic link included, so nothing planted
	// since the checks above is ever followed.
	f, err := os.OpenFile(partPath, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, diskMode)
	if err != nil {
		return nil, permanentf("creating %s: %w", partPath, err)
	}
	if err := f.Chmod(diskMode); err != nil { // whatever the umask
		f.Close()
		os.Remove(partPath)
		return nil, permanentf("creating %s: %w", partPath, err)
	}
	return &target{dir: dir, part: f}, nil
}

// checkRegular refuses path when it exists and is not a regular file.
func checkRegular(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return permanentf("checking %s: %w", path, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return permanentf("%s is a symbolic link; refusing to follow it", path)
	case !fi.Mode().IsRegular():
		return permanentf("%s exists and is not a regular file", path)
	}
	return nil
}

// path is disk.img's path.
func (t *target) path() string { return filepath.Join(t.dir, importerapi.DiskName) }

// commit sizes disk.img.part to size, flushes it and renames it to disk.img.
func (t *target) commit(size int64) error {
	if err := t.part.Truncate(size); err != nil {
		return permanentf("resizing %s: %w", t.part.Name(), err)
	}
	if err := t.part.Sync(); err != nil {
		return permanentf("flushing %s: %w", t.part.Name(), err)
	}
	if err := t.part.Close(); err != nil {
		return permanentf("closing %s: %w", t.part.Name(), err)
	}
	// rename replaces a disk.img that became a symbolic link meanwhile; it never follows one.
	if err := checkRegular(t.path()); err != nil {
		return err
	}
	if err := os.Rename(t.part.Name(), t.path()); err != nil {
		return permanentf("renaming %s: %w", t.part.Name(), err)
	}
	t.committed = true
	if err := syncDir(t.dir); err != nil {
		return permanentf("flushing the directory %s: %w", t.dir, err)
	}
	return nil
}

// abort removes disk.img.part unless the import was committed.
func (t *target) abort() {
	if t.committed {
		return
	}
	t.part.Close()
	os.Remove(t.part.Name())
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
