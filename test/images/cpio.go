package images

import (
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// The initramfs is a cpio archive in the "newc" (SVR4, no CRC) format the kernel unpacks
// (Documentation/driver-api/early-userspace/buffer-format.rst). The format is a 110-byte
// ASCII header, the NUL-terminated name and the data, each padded to 4 bytes, so it is
// written here rather than by a library or Debian's cpio: this writer fixes every field that
// would vary between runs (inode numbers, mtimes, owners), so the same inputs give the same
// bytes, and the build needs no extra host package.

// cpioEntry is one member of the archive.
type cpioEntry struct {
	// Name is the path inside the archive, without a leading slash ("bin/busybox").
	Name string
	// Mode holds the permission bits and the type (fs.ModeDir, fs.ModeSymlink,
	// fs.ModeDevice|fs.ModeCharDevice); a regular file has no type bits.
	Mode fs.FileMode
	// Data is a regular file's content or a symlink's target.
	Data []byte
	// Major and Minor are a device node's numbers.
	Major, Minor uint32
}

// cpioTree is the set of entries of an archive, keyed by name; parent directories are added
// when it is written.
type cpioTree map[string]cpioEntry

func (t cpioTree) dir(name string) { t.add(cpioEntry{Name: name, Mode: fs.ModeDir | 0o755}) }
func (t cpioTree) file(name string, perm fs.FileMode, data []byte) {
	t.add(cpioEntry{Name: name, Mode: perm, Data: data})
}
func (t cpioTree) symlink(name, target string) {
	t.add(cpioEntry{Name: name, Mode: fs.ModeSymlink | 0o777, Data: []byte(target)})
}
func (t cpioTree) charDevice(name string, perm fs.FileMode, major, minor uint32) {
	t.add(cpioEntry{Name: name, Mode: fs.ModeDevice | fs.ModeCharDevice | perm, Major: major, Minor: minor})
}

func (t cpioTree) add(e cpioEntry) {
	e.Name = strings.TrimPrefix(path.Clean("/"+e.Name), "/")
	t[e.Name] = e
}

// writeTo writes the archive: every entry and its missing parent directories, sorted by
// name (so a directory precedes its contents), then the trailer.
func (t cpioTree) writeTo(w io.Writer) error {
	all := cpioTree{}
	for name, e := range t {
		all[name] = e
		for d := path.Dir(name); d != "." && d != "/"; d = path.Dir(d) {
			if _, ok := t[d]; !ok {
				all[d] = cpioEntry{Name: d, Mode: fs.ModeDir | 0o755}
			}
		}
	}
	names := make([]string, 0, len(all))
	for name := range all {
		names = append(names, name)
	}
	sort.Strings(names)
	cw := &cpioWriter{w: w}
	for _, name := range names {
		if err := cw.write(all[name]); err != nil {
			return err
		}
	}
	return cw.write(cpioEntry{Name: "TRAILER!!!"})
}

// cpioWriter numbers the entries (the kernel links entries that share an inode number and
// has nlink > 1) and keeps the 4-byte alignment.
type cpioWriter struct {
	w     io.Writer
	ino   uint32
	count int64
}

// cpioMode is the mode field: S_IFMT type bits and permissions as the kernel expects.
func cpioMode(m fs.FileMode) (uint32, error) {
	perm := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		perm |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		perm |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		perm |= 0o1000
	}
	switch {
	case m.IsRegular():
		return 0o100000 | perm, nil
	case m.IsDir():
		return 0o040000 | perm, nil
	case m&fs.ModeSymlink != 0:
		return 0o120000 | perm, nil
	case m&fs.ModeCharDevice != 0:
		return 0o020000 | perm, nil
	case m&fs.ModeDevice != 0:
		return 0o060000 | perm, nil
	}
	return 0, fmt.Errorf("cpio: unsupported file type %v", m.Type())
}

func (cw *cpioWriter) write(e cpioEntry) error {
	mode, nlink := uint32(0), uint32(1)
	if e.Name != "TRAILER!!!" {
		var err error
		if mode, err = cpioMode(e.Mode); err != nil {
			return fmt.Errorf("%s: %w", e.Name, err)
		}
		cw.ino++
		if e.Mode.IsDir() {
			nlink = 2
		}
	}
	ino := cw.ino
	if e.Name == "TRAILER!!!" {
		ino = 0
	}
	// magic, ino, mode, uid, gid, nlink, mtime, filesize, devmajor, devminor, rdevmajor,
	// rdevminor, namesize, check: all 8-digit hex.
	hdr := fmt.Sprintf("070701%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x",
		ino, mode, 0, 0, nlink, 0, len(e.Data), 0, 0, e.Major, e.Minor, len(e.Name)+1, 0)
	if err := cw.put([]byte(hdr)); err != nil {
		return err
	}
	if err := cw.put(append([]byte(e.Name), 0)); err != nil {
		return err
	}
	if err := cw.pad(); err != nil {
		return err
	}
	if err := cw.put(e.Data); err != nil {
		return err
	}
	return cw.pad()
}

func (cw *cpioWriter) put(b []byte) error {
	n, err := cw.w.Write(b)
	cw.count += int64(n)
	return err
}

func (cw *cpioWriter) pad() error {
	if r := cw.count % 4; r != 0 {
		return cw.put(make([]byte, 4-r))
	}
	return nil
}
