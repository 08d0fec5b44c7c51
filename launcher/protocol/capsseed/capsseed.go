// Package capsseed is the node's seed of libvirt's QEMU capabilities cache, part of the
// contract between the node agent and the launchers of its node.
//
// Every launcher runs its own session libvirtd, and a fresh libvirtd probes QEMU's
// capabilities before its first domain: about 2.5 s of CPU alone, 25 CPU-seconds when ten
// launchers start at once on a 2-core node (docs/design.md section 9). The probe's result is a file per
// QEMU binary in libvirt's cache directory. The node agent's Pod probes once, in an init
// container running the launcher image; the node agent copies the files into a root-owned
// directory on the node that launcher Pods mount read-only, and each launcher copies them into
// its daemon's cache before starting libvirtd. libvirt checks each cached file against its
// own and QEMU's binaries, the kernel and the CPU, and probes again when one does not match,
// so a stale seed (QEMU upgraded on the node) costs only the probe it would have cost anyway.
//
// The files are copied only when they have libvirt's cache file names, are regular files
// opened without following a symlink, and are of bounded size.
package capsseed

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"golang.org/x/sys/unix"
)

// DefaultDir is the node's seed directory: written by the node agent, mounted read-only into
// launcher Pods at the same path.
const DefaultDir = "/var/lib/vireo/capabilities"

// MaxFileSize bounds one capabilities file (libvirt 9's is about 300 KiB).
const MaxFileSize = 8 << 20

// maxFiles bounds how many files a copy takes (one per QEMU binary).
const maxFiles = 16

// fileName matches libvirt's cache file names: the SHA-256 of the emulator's path, in hex.
var fileName = regexp.MustCompile(`^[0-9a-f]{64}\.xml$`)

// Owner is who the copies belong to; nil keeps the caller's.
type Owner struct {
	UID, GID int
}

// Copy copies the capabilities files of directory src into directory dst (created with mode
// 0700 for owner, or 0755 when mode allows others to read) and returns how many it copied. A
// missing src is no seed: 0 and no error. Each file is written under a temporary name and
// renamed, so a reader never sees part of one.
func Copy(src, dst string, mode os.FileMode, owner *Owner) (int, error) {
	dir, names, err := openSeed(src)
	if dir == nil || err != nil {
		return 0, err
	}
	defer dir.Close()
	srcFD := int(dir.Fd())
	dirMode := os.FileMode(0o700)
	if mode&0o004 != 0 {
		dirMode = 0o755
	}
	if err := ensureDir(dst, dirMode, owner); err != nil {
		return 0, err
	}
	copied := 0
	for _, name := range names {
		if !fileName.MatchString(name) {
			continue
		}
		if copied == maxFiles {
			return copied, fmt.Errorf("capabilities seed: %s holds more than %d capabilities files", src, maxFiles)
		}
		if err := copyFile(srcFD, name, filepath.Join(dst, name), mode, owner); err != nil {
			return copied, err
		}
		copied++
	}
	return copied, nil
}

// openSeed opens the seed directory src without following a link and lists it; a missing src
// is no seed (nil, no error).
func openSeed(src string) (*os.File, []string, error) {
	fd, err := unix.Open(src, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("capabilities seed: open %s: %w", src, err)
	}
	dir := os.NewFile(uintptr(fd), src)
	names, err := dir.Readdirnames(-1)
	if err != nil {
		dir.Close()
		return nil, nil, fmt.Errorf("capabilities seed: list %s: %w", src, err)
	}
	return dir, names, nil
}

// ensureDir creates dir when it is missing and checks that it is a directory, not a link.
func ensureDir(dir string, mode os.FileMode, owner *Owner) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("capabilities seed: %w", err)
	}
	err := os.Mkdir(dir, mode)
	if err == nil && owner != nil {
		err = os.Lchown(dir, owner.UID, owner.GID)
	}
	if err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("capabilities seed: create %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("capabilities seed: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("capabilities seed: %s is not a directory", dir)
	}
	return nil
}

// copyFile copies name below the directory srcFD to dst through a temporary file.
func copyFile(srcFD int, name, dst string, mode os.FileMode, owner *Owner) error {
	fd, err := unix.Openat(srcFD, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("capabilities seed: open %s without following links: %w", name, err)
	}
	in := os.NewFile(uintptr(fd), name)
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return fmt.Errorf("capabilities seed: %w", err)
	}
	if !fi.Mode().IsRegular() || fi.Size() > MaxFileSize {
		return fmt.Errorf("capabilities seed: %s is not a regular file of at most %d bytes", name, MaxFileSize)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".seed-*")
	if err != nil {
		return fmt.Errorf("capabilities seed: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename: nothing to remove
	_, err = io.Copy(tmp, io.LimitReader(in, MaxFileSize))
	if err == nil {
		err = tmp.Chmod(mode)
	}
	if err == nil && owner != nil {
		err = tmp.Chown(owner.UID, owner.GID)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		return fmt.Errorf("capabilities seed: write %s: %w", dst, err)
	}
	return nil
}

// CopyBeneath copies the seed in src into a new directory name of dst (an open directory
// whose entries someone else may control, such as a Pod's emptyDir), owned by owner: into a
// fresh hidden directory first, then renamed to name, so that a reader sees the seed whole or
// not at all. Every call is relative to dst's descriptor and follows no link, so nothing
// planted in dst leads the copy elsewhere. A name that exists already counts as copied.
func CopyBeneath(src string, dst *os.File, name string, owner Owner) (int, error) {
	srcDir, names, err := openSeed(src)
	if srcDir == nil || err != nil {
		return 0, err
	}
	defer srcDir.Close()
	srcFD := int(srcDir.Fd())
	dstFD := int(dst.Fd())
	tmp := fmt.Sprintf(".%s-%d", name, os.Getpid())
	_ = os.RemoveAll("/proc/self/fd/" + strconv.Itoa(dstFD) + "/" + tmp) // a leftover of an earlier try: removed, links and all, never followed
	if err := unix.Mkdirat(dstFD, tmp, 0o755); err != nil {
		return 0, fmt.Errorf("capabilities seed: create %s: %w", tmp, err)
	}
	dirFD, err := unix.Openat(dstFD, tmp, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("capabilities seed: open %s: %w", tmp, err)
	}
	dir := os.NewFile(uintptr(dirFD), tmp)
	defer dir.Close()
	copied := 0
	for _, n := range names {
		if !fileName.MatchString(n) || copied == maxFiles {
			continue
		}
		if err := copyFileAt(srcFD, n, dirFD, owner); err != nil {
			return copied, err
		}
		copied++
	}
	if err := unix.Fchown(dirFD, owner.UID, owner.GID); err != nil {
		return copied, fmt.Errorf("capabilities seed: %w", err)
	}
	if err := unix.Renameat(dstFD, tmp, dstFD, name); err != nil {
		_ = os.RemoveAll("/proc/self/fd/" + strconv.Itoa(dstFD) + "/" + tmp)
		if errors.Is(err, unix.EEXIST) || errors.Is(err, unix.ENOTEMPTY) {
			return copied, nil
		}
		return copied, fmt.Errorf("capabilities seed: rename %s to %s: %w", tmp, name, err)
	}
	return copied, nil
}

// copyFileAt copies the regular file name of the directory srcFD into the directory dstFD,
// creating it there (never through a link), readable by all, owned by owner.
func copyFileAt(srcFD int, name string, dstFD int, owner Owner) error {
	fd, err := unix.Openat(srcFD, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("capabilities seed: open %s without following links: %w", name, err)
	}
	in := os.NewFile(uintptr(fd), name)
	defer in.Close()
	if fi, err := in.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > MaxFileSize {
		return fmt.Errorf("capabilities seed: %s is not a regular file of at most %d bytes (%v)", name, MaxFileSize, err)
	}
	outFD, err := unix.Openat(dstFD, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return fmt.Errorf("capabilities seed: create %s: %w", name, err)
	}
	out := os.NewFile(uintptr(outFD), name)
	_, err = io.Copy(out, io.LimitReader(in, MaxFileSize))
	if err == nil {
		err = out.Chown(owner.UID, owner.GID)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("capabilities seed: write %s: %w", name, err)
	}
	return nil
}
