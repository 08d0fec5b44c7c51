package disks

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// dirHandle is an open directory that files are created in and opened from by name, never by
// a path a symlink could redirect.
type dirHandle struct {
	f    *os.File
	path string
}

// openDir opens the trusted directory path (symlinks in path itself are the launcher's
// business, such as /var/run -> /run).
func openDir(path string) (*dirHandle, error) {
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("directory %q is not an absolute path", path)
	}
	fd, err := unix.Open(path, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return &dirHandle{f: os.NewFile(uintptr(fd), path), path: filepath.Clean(path)}, nil
}

// Close closes the directory.
func (d *dirHandle) Close() error { return d.f.Close() }

// fd is the directory's file descriptor.
func (d *dirHandle) fd() int { return int(d.f.Fd()) }

// subdir creates (mode 0700) or opens the subdirectory name, refusing a symlink in its place.
func (d *dirHandle) subdir(name string) (*dirHandle, error) {
	if err := unix.Mkdirat(d.fd(), name, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, &os.PathError{Op: "mkdir", Path: filepath.Join(d.path, name), Err: err}
	}
	fd, err := unix.Openat(d.fd(), name, unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: filepath.Join(d.path, name), Err: symlinkHint(err)}
	}
	p := filepath.Join(d.path, name)
	return &dirHandle{f: os.NewFile(uintptr(fd), p), path: p}, nil
}

// createExclusive creates the new file name (mode 0600), failing if anything, a symlink
// included, is there already.
func (d *dirHandle) createExclusive(name string) (*os.File, error) {
	fd, err := unix.Openat(d.fd(), name, unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, &os.PathError{Op: "create", Path: filepath.Join(d.path, name), Err: err}
	}
	return os.NewFile(uintptr(fd), filepath.Join(d.path, name)), nil
}

// writeFile creates the new file name with data.
func (d *dirHandle) writeFile(name string, data []byte) error {
	f, err := d.createExclusive(name)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// rename moves from over to within the directory; to is replaced (a symlink at to is replaced,
// not followed).
func (d *dirHandle) rename(from, to string) error {
	if err := unix.Renameat(d.fd(), from, d.fd(), to); err != nil {
		return &os.LinkError{Op: "rename", Old: filepath.Join(d.path, from), New: filepath.Join(d.path, to), Err: err}
	}
	return nil
}

// remove deletes the file name; a missing file is no error.
func (d *dirHandle) remove(name string) {
	_ = unix.Unlinkat(d.fd(), name, 0)
}

// existingFile reports whether name is a regular file in the directory; a symlink or anything
// else in its place is an error.
func (d *dirHandle) existingFile(name string) (bool, error) {
	var st unix.Stat_t
	err := unix.Fstatat(d.fd(), name, &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case errors.Is(err, unix.ENOENT):
		return false, nil
	case err != nil:
		return false, &os.PathError{Op: "stat", Path: filepath.Join(d.path, name), Err: err}
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return false, fmt.Errorf("%s exists and is not a regular file", filepath.Join(d.path, name))
	}
	return true, nil
}

// openBeneath opens the regular file rel below the trusted directory root for reading, with no
// symlink and no ".." on the way: rel comes from content a user controls (a container image, a
// volume), where a planted symlink could point anywhere on the node. It walks rel one
// component at a time with O_NOFOLLOW, which works on every kernel (openat2's
// RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS would do the same from Linux 5.6 on).
func openBeneath(root, rel string) (*os.File, error) {
	display := filepath.Join(root, rel)
	parts := strings.Split(filepath.ToSlash(rel), "/")
	var clean []string
	for _, p := range parts {
		switch p {
		case "", ".":
		case "..":
			return nil, fmt.Errorf("%s: the path may not contain \"..\"", display)
		default:
			clean = append(clean, p)
		}
	}
	if len(clean) == 0 {
		return nil, fmt.Errorf("%s: no file named", display)
	}
	dir, err := openDir(root)
	if err != nil {
		return nil, err
	}
	defer func() { dir.Close() }()
	for _, p := range clean[:len(clean)-1] {
		fd, err := unix.Openat(dir.fd(), p, unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: display, Err: symlinkHint(err)}
		}
		dir.Close()
		dir = &dirHandle{f: os.NewFile(uintptr(fd), p)}
	}
	fd, err := unix.Openat(dir.fd(), clean[len(clean)-1], unix.O_NOFOLLOW|unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: display, Err: symlinkHint(err)}
	}
	f := os.NewFile(uintptr(fd), display)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		f.Close()
		return nil, &os.PathError{Op: "stat", Path: display, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file", display)
	}
	return f, nil
}

// symlinkErr explains ELOOP and ENOTDIR from an O_NOFOLLOW open: a symlink was in the way.
type symlinkErr struct{ err error }

// Error says that a symlink (or, for ENOTDIR, a file) was in the way.
func (e *symlinkErr) Error() string {
	if errors.Is(e.err, unix.ENOTDIR) {
		return "a component is not a directory, or is a symlink, which Vireo does not follow"
	}
	return "is a symlink, which Vireo does not follow"
}

// Unwrap returns the system error.
func (e *symlinkErr) Unwrap() error { return e.err }

// symlinkHint wraps the errors an O_NOFOLLOW open gives for a symlink.
func symlinkHint(err error) error {
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
		return &symlinkErr{err}
	}
	return err
}

// SupportsDirectIO reports whether the file at path can be opened with O_DIRECT, which disk
// cache mode "none" needs (tmpfs, for one, refuses it).
func SupportsDirectIO(path string) bool { return opensDirect(path, unix.O_NOFOLLOW) }

// opensDirect reports whether path opens read-only with O_DIRECT and extra flags.
func opensDirect(path string, extra int) bool {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECT|unix.O_CLOEXEC|unix.O_NONBLOCK|extra, 0)
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
}
