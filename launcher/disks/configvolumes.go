package disks

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/launcher/domain"
)

// Bounds on what the launcher copies out of a config volume's mount: a ConfigMap or Secret
// holds at most 1 MiB, a downwardAPI file of annotations at most 256 KiB per object; the
// bounds leave room and stop a volume that is not what it claims to be.
const (
	maxConfigVolumeBytes = 4 << 20
	maxConfigVolumeFiles = 1024
	maxConfigVolumeDepth = 8
)

// configVolumeLabel is the volume label of vol's disk (a configMap, secret, serviceAccount or
// downwardAPI volume): its volumeLabel, or KubeVirt's "cfgdata".
func configVolumeLabel(vol *v1.Volume) string {
	label := ""
	switch {
	case vol.ConfigMap != nil:
		label = vol.ConfigMap.VolumeLabel
	case vol.Secret != nil:
		label = vol.Secret.VolumeLabel
	case vol.DownwardAPI != nil:
		label = vol.DownwardAPI.VolumeLabel
	}
	if label == "" {
		return v1.DefaultConfigVolumeLabel
	}
	return label
}

// ConfigVolume writes the ISO disk of a configMap, secret, serviceAccount or downwardAPI
// volume labelled label, holding the files the kubelet mounted at mountDir (ReadConfigVolume),
// each at its key's (or path's) name below the ISO's root.
func (p *Preparer) ConfigVolume(ctx context.Context, volume, mountDir, label string) (domain.DiskSource, error) {
	files, err := ReadConfigVolume(mountDir)
	if err != nil {
		return domain.DiskSource{}, err
	}
	return p.writeISO(ctx, volume, label, files)
}

// configVolumeReader walks a kubelet-written volume below an open root directory.
type configVolumeReader struct {
	root  *dirHandle
	files map[string][]byte
	bytes int
}

// ReadConfigVolume reads every file of the volume the kubelet mounted at dir (a path the
// launcher builds from constants and a checked volume name), by path relative to dir. The
// kubelet's atomic writer makes each key a link into the volume's "..data" directory; links
// are followed only while they stay below dir (openat2's RESOLVE_BENEATH, no /proc magic
// links), names starting with ".." (the kubelet's own) are skipped, and the whole is bounded
// in size, count and depth.
func ReadConfigVolume(dir string) (map[string][]byte, error) {
	root, err := openDir(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	r := &configVolumeReader{root: root, files: map[string][]byte{}}
	if err := r.walkDir(".", 0); err != nil {
		return nil, err
	}
	return r.files, nil
}

// walkDir reads the directory rel (below the root) and everything in it.
func (r *configVolumeReader) walkDir(rel string, depth int) error {
	if depth > maxConfigVolumeDepth {
		return fmt.Errorf("%s: directories nest deeper than %d", filepath.Join(r.root.path, rel), maxConfigVolumeDepth)
	}
	f, err := r.open(rel)
	if err != nil {
		return err
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return err
	}
	for _, name := range names {
		if strings.HasPrefix(name, "..") {
			continue
		}
		if err := r.walk(path.Join(rel, name), depth); err != nil {
			return err
		}
	}
	return nil
}

// walk reads rel, a file or a directory.
func (r *configVolumeReader) walk(rel string, depth int) error {
	f, err := r.open(rel)
	if err != nil {
		return err
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return &os.PathError{Op: "stat", Path: f.Name(), Err: err}
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return r.walkDir(rel, depth+1)
	case unix.S_IFREG:
	default:
		return fmt.Errorf("%s is neither a regular file nor a directory", f.Name())
	}
	if len(r.files) >= maxConfigVolumeFiles {
		return fmt.Errorf("%s: more than %d files", r.root.path, maxConfigVolumeFiles)
	}
	left := maxConfigVolumeBytes - r.bytes
	data, err := io.ReadAll(io.LimitReader(f, int64(left)+1))
	if err != nil {
		return err
	}
	if len(data) > left {
		return fmt.Errorf("%s: the volume's files hold more than %d bytes", r.root.path, maxConfigVolumeBytes)
	}
	r.bytes += len(data)
	r.files[rel] = data
	return nil
}

// open opens rel below the root, following links only while they stay below it.
func (r *configVolumeReader) open(rel string) (*os.File, error) {
	display := filepath.Join(r.root.path, rel)
	how := unix.OpenHow{Flags: unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NONBLOCK,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS}
	fd, err := unix.Openat2(r.root.fd(), rel, &how)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: display, Err: err}
	}
	return os.NewFile(uintptr(fd), display), nil
}
