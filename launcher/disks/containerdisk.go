package disks

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// containerDiskDefaultDir is the directory of a containerDisk image that holds its disk when
// the VMI names no path (KubeVirt's convention).
const containerDiskDefaultDir = "disk"

// containerDiskFile returns the disk file of the image mounted at root, relative to root:
// imagePath (absolute inside the image) when set, else the first regular file, by name, in the
// image's /disk/ directory, which is opened without following a symlink.
func containerDiskFile(root, imagePath string) (string, error) {
	if imagePath != "" {
		rel := strings.TrimPrefix(path.Clean("/"+imagePath), "/")
		if rel == "" {
			return "", fmt.Errorf("path %q names no file in the image", imagePath)
		}
		return rel, nil
	}
	dir, err := openDir(root)
	if err != nil {
		return "", err
	}
	defer dir.Close()
	fd, err := unix.Openat(dir.fd(), containerDiskDefaultDir, unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return "", errors.New("the image has no /disk/ directory and the volume names no path: put the disk under /disk/ or set containerDisk.path")
		}
		return "", &os.PathError{Op: "open", Path: root + "/" + containerDiskDefaultDir, Err: symlinkHint(err)}
	}
	disk := os.NewFile(uintptr(fd), root+"/"+containerDiskDefaultDir)
	defer disk.Close()
	entries, err := disk.ReadDir(-1)
	if err != nil {
		return "", err
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, e := range entries {
		if e.Type().IsRegular() {
			return containerDiskDefaultDir + "/" + e.Name(), nil
		}
	}
	return "", errors.New("the image's /disk/ directory holds no regular file")
}

// readableHint explains a permission error on an image's file: the launcher runs as uid 107.
func readableHint(err error) error {
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("%w (the launcher runs as uid 107: the image's disk must be readable by it, owned by 107:107 or world-readable, as KubeVirt's containerDisks are)", err)
	}
	return err
}
