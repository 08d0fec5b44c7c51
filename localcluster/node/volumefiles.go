package node

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
)

// fileMode is a volume's defaultMode, 0644 when unset as the API defaults it.
func fileMode(m *int32) os.FileMode {
	if m == nil {
		return 0o644
	}
	return os.FileMode(*m) & os.ModePerm
}

func fsGroup(pod *corev1.Pod) int {
	if sc := pod.Spec.SecurityContext; sc != nil && sc.FSGroup != nil {
		return int(*sc.FSGroup)
	}
	return -1
}

// writeFiles writes a file-backed volume's files into dir, each replaced atomically in place
// (temporary file, then rename), so a container that already mounts dir (adopted after a node
// restart) sees the new content, and removes the files of keys that are gone. Paths come from
// the Pod spec: each must stay inside dir.
func writeFiles(dir string, files map[string][]byte, mode os.FileMode, group int) error {
	if err := writeEach(dir, files, mode, group); err != nil {
		return err
	}
	keep := make(map[string]bool, len(files))
	for rel := range files {
		keep[filepath.Clean(rel)] = true
	}
	return filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if rel, _ := filepath.Rel(dir, path); !keep[rel] {
			return os.Remove(path)
		}
		return nil
	})
}

func writeEach(dir string, files map[string][]byte, mode os.FileMode, group int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for rel, data := range files {
		clean := filepath.Clean(rel)
		if filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") || clean == "." {
			return fmt.Errorf("file path %q must be relative and inside the volume", rel)
		}
		path := filepath.Join(dir, clean)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-")
		if err != nil {
			return err
		}
		_, werr := tmp.Write(data)
		cerr := tmp.Close()
		if err := firstErr(werr, cerr, os.Chmod(tmp.Name(), mode)); err != nil {
			_ = os.Remove(tmp.Name())
			return err
		}
		if group >= 0 {
			if err := os.Lchown(tmp.Name(), -1, group); err != nil {
				_ = os.Remove(tmp.Name())
				return err
			}
		}
		if err := os.Rename(tmp.Name(), path); err != nil {
			_ = os.Remove(tmp.Name())
			return err
		}
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// ensureHostPath checks or creates a hostPath volume's (node-mapped) path by its type. The
// directories below root are created without following symlinks (a container may have
// planted one in a host path it mounts).
func ensureHostPath(root, path string, t *corev1.HostPathType) error {
	if err := mkdirNoFollow(root, filepath.Dir(path)); err != nil {
		return err
	}
	kind := corev1.HostPathUnset
	if t != nil {
		kind = *t
	}
	fi, err := os.Stat(path)
	switch kind {
	case corev1.HostPathFileOrCreate:
		if os.IsNotExist(err) {
			f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|syscall.O_NOFOLLOW, 0o644)
			if err != nil {
				return err
			}
			return f.Close()
		}
		return err
	case corev1.HostPathFile:
		if err != nil || fi.IsDir() {
			return fmt.Errorf("hostPath %s is not a file", path)
		}
		return nil
	case corev1.HostPathDirectory:
		if err != nil || !fi.IsDir() {
			return fmt.Errorf("hostPath %s is not a directory", path)
		}
		return nil
	case corev1.HostPathSocket, corev1.HostPathCharDev, corev1.HostPathBlockDev:
		if err != nil {
			return fmt.Errorf("hostPath %s does not exist", path)
		}
		return nil
	}
	// DirectoryOrCreate, and unset: a bind mount needs the path, so a missing one is a directory.
	if os.IsNotExist(err) {
		return mkdirNoFollow(root, path)
	}
	return err
}

// mkdirNoFollow creates dir and its missing parents below root (which exists), refusing to
// pass through a symlink.
func mkdirNoFollow(root, dir string) error {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return fmt.Errorf("%s is not inside %s", dir, root)
	}
	cur := root
	for _, part := range strings.Split(rel, "/") {
		if part == "." || part == "" {
			continue
		}
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		switch {
		case os.IsNotExist(err):
			if err := os.Mkdir(cur, 0o755); err != nil && !os.IsExist(err) {
				return err
			}
		case err != nil:
			return err
		case fi.Mode()&os.ModeSymlink != 0:
			return fmt.Errorf("host path %s is a symlink, which is refused", cur)
		case !fi.IsDir():
			return fmt.Errorf("host path %s is not a directory", cur)
		}
	}
	return nil
}

// setVolumeOwnership gives a claim's volume to the Pod's fsGroup as a kubelet does for volumes
// that support ownership management: every file and directory gets the group and group
// read/write access (directories also the setgid bit, so new files inherit the group). A
// container may have planted links in the volume: each entry is opened below the volume's root
// without following any link, and changed through that descriptor; links are left alone.
func setVolumeOwnership(dir string, group int) error {
	root, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(root)
	return filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&os.ModeSymlink != 0 {
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		fd, err := unix.Openat2(root, rel, &unix.OpenHow{Flags: unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
		if err != nil {
			return fmt.Errorf("giving %s to group %d: %w", path, group, err)
		}
		defer unix.Close(fd)
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return err
		}
		mode := st.Mode&0o7777 | 0o060
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			mode |= 0o010 | unix.S_ISGID
		case unix.S_IFREG:
		default:
			return nil
		}
		proc := "/proc/self/fd/" + strconv.Itoa(fd)
		if err := os.Chown(proc, -1, group); err != nil {
			return err
		}
		return unix.Chmod(proc, mode)
	})
}
