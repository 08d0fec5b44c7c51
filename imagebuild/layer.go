package imagebuild

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/klauspost/compress/gzip"
)

// layerEpoch is every layer entry's time: fixed, so that a layer depends only on its content
// and one made for an earlier commit is reused (the image's creation time is its commit's).
var layerEpoch = time.Unix(0, 0).UTC()

// layerFile is a file (or directory, or symlink) of a layer written from memory.
type layerFile struct {
	Name string
	Mode fs.FileMode // permission bits, plus fs.ModeDir or fs.ModeSymlink
	UID  int
	GID  int
	Data []byte // the content; the target of a symlink
}

// layerWriter writes one layer as a gzip-compressed tar, reproducibly: entries in the order
// given (callers sort), every time the build's epoch, no user or group names, no access or
// change times, and a gzip header without name or time. The same input gives the same bytes.
type layerWriter struct {
	epoch time.Time
	file  *os.File
	gz    *gzip.Writer
	tw    *tar.Writer
	seen  map[string]bool
	// size counts the uncompressed tar's bytes (the layer's unpacked size).
	size countingWriter
}

// countingWriter counts what goes through it to w.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func newLayerWriter(path string, epoch time.Time) (*layerWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	gz, err := gzip.NewWriterLevel(f, gzip.DefaultCompression)
	if err != nil {
		f.Close()
		return nil, err
	}
	w := &layerWriter{epoch: epoch.UTC(), file: f, gz: gz, seen: map[string]bool{}}
	w.size.w = gz
	w.tw = tar.NewWriter(&w.size)
	return w, nil
}

// header is the tar header of a layer entry with everything that varies between builds fixed.
func (w *layerWriter) header(name string, mode fs.FileMode, uid, gid int) *tar.Header {
	h := &tar.Header{Name: name, Mode: int64(mode.Perm()), Uid: uid, Gid: gid, ModTime: w.epoch, Format: tar.FormatPAX}
	if mode&fs.ModeSticky != 0 {
		h.Mode |= 0o1000
	}
	return h
}

// add writes one in-memory entry. Parent directories must have been added before.
func (w *layerWriter) add(f layerFile) error {
	h := w.header(f.Name, f.Mode, f.UID, f.GID)
	switch {
	case f.Mode.IsDir():
		h.Typeflag, h.Name = tar.TypeDir, strings.TrimSuffix(f.Name, "/")+"/"
	case f.Mode&fs.ModeSymlink != 0:
		h.Typeflag, h.Linkname = tar.TypeSymlink, string(f.Data)
	default:
		h.Typeflag, h.Size = tar.TypeReg, int64(len(f.Data))
	}
	w.seen[strings.TrimSuffix(h.Name, "/")] = true
	if err := w.tw.WriteHeader(h); err != nil {
		return err
	}
	if h.Typeflag == tar.TypeReg {
		_, err := w.tw.Write(f.Data)
		return err
	}
	return nil
}

// addTree writes the tree under root as the image's root (root itself is not an entry),
// in lexical order. Owners are kept; setuid and setgid bits are dropped (nothing in Vireo's
// images may gain privileges by exec); hard links stay hard links. Paths added before (the
// base files) are not written again.
func (w *layerWriter) addTree(root string) error {
	links := map[uint64]string{}
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == root {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		if w.seen[name] {
			return nil
		}
		fi, err := os.Lstat(path)
		if err != nil {
			return err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return fmt.Errorf("%s: no stat", path)
		}
		h := w.header(name, fi.Mode(), int(st.Uid), int(st.Gid))
		switch {
		case fi.IsDir():
			h.Typeflag, h.Name = tar.TypeDir, name+"/"
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			h.Typeflag, h.Linkname = tar.TypeSymlink, target
		case fi.Mode().IsRegular():
			if first, ok := links[st.Ino]; ok && st.Nlink > 1 {
				h.Typeflag, h.Linkname = tar.TypeLink, first
				break
			}
			links[st.Ino] = name
			h.Typeflag, h.Size = tar.TypeReg, fi.Size()
		default:
			return fmt.Errorf("%s: %s files do not belong in an image", path, fi.Mode().Type())
		}
		if err := w.tw.WriteHeader(h); err != nil {
			return err
		}
		if h.Typeflag != tar.TypeReg {
			return nil
		}
		return copyFileTo(w.tw, path)
	})
}

func copyFileTo(dst io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(dst, f)
	return err
}

// close finishes the tar and the gzip stream and closes the file.
func (w *layerWriter) close() error {
	err := w.tw.Close()
	if e := w.gz.Close(); err == nil {
		err = e
	}
	if e := w.file.Close(); err == nil {
		err = e
	}
	return err
}

// writeLayer writes files (sorted by name here), then the tree under root (when not empty),
// into a layer at path, and returns the layer's unpacked size.
func writeLayer(path string, epoch time.Time, files []layerFile, root string) (int64, error) {
	w, err := newLayerWriter(path, epoch)
	if err != nil {
		return 0, err
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	for _, f := range files {
		if err := w.add(f); err != nil {
			w.close()
			return 0, fmt.Errorf("layer %s: %s: %w", path, f.Name, err)
		}
	}
	if root != "" {
		if err := w.addTree(root); err != nil {
			w.close()
			return 0, fmt.Errorf("layer %s: %w", path, err)
		}
	}
	err = w.close()
	return w.size.n, err
}
