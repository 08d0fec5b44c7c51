package disks

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/launcher/protocol"
)

// KubeVirt's keys for cloud-init data in a Secret, in the order they are looked up.
var (
	userDataKeys    = []string{"userdata", "userData"}
	networkDataKeys = []string{"networkdata", "networkData"}
)

// errNoKey says a mounted Secret holds none of the keys asked for.
var errNoKey = errors.New("no such key")

// ReadMountedSecret reads the first of keys that the Secret mounted at dir (a path the launcher
// builds from constants and a checked volume name) holds. A kubelet's secret volume is a tree of
// symlinks inside the volume (key -> ..data/key -> ..<timestamp>/key), so the file is resolved
// with openat2's RESOLVE_BENEATH: symlinks are followed only while they stay inside dir, and
// never through /proc magic links. The file must be a regular file of at most
// protocol.MaxSecretFileBytes.
func ReadMountedSecret(dir string, keys ...string) ([]byte, string, error) {
	root, err := openDir(dir)
	if err != nil {
		return nil, "", err
	}
	defer root.Close()
	for _, key := range keys {
		data, err := readBeneath(root, key)
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		return data, key, err
	}
	return nil, "", fmt.Errorf("%s: %w %s", dir, errNoKey, strings.Join(keys, " or "))
}

// readBeneath reads the regular file name below root, bounded by protocol.MaxSecretFileBytes.
func readBeneath(root *dirHandle, name string) ([]byte, error) {
	display := filepath.Join(root.path, name)
	how := unix.OpenHow{Flags: unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NONBLOCK,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS}
	fd, err := unix.Openat2(root.fd(), name, &how)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: display, Err: err}
	}
	f := os.NewFile(uintptr(fd), display)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &os.PathError{Op: "stat", Path: display, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("%s is not a regular file", display)
	}
	if st.Size > protocol.MaxSecretFileBytes {
		return nil, fmt.Errorf("%s is %d bytes, more than the %d a Secret may hold", display, st.Size, protocol.MaxSecretFileBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, protocol.MaxSecretFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > protocol.MaxSecretFileBytes {
		return nil, fmt.Errorf("%s grew beyond %d bytes while being read", display, protocol.MaxSecretFileBytes)
	}
	return data, nil
}

// cloudInitSecrets returns the cloud-init data vol's Secrets hold: given by the caller in
// CloudInitSecrets, or else read from where the launcher Pod mounts them under SecretsDir.
func (n NodeVolumes) cloudInitSecrets(vol *v1.Volume) (ResolvedSecrets, error) {
	if s, ok := n.CloudInitSecrets[vol.Name]; ok {
		return s, nil
	}
	var out ResolvedSecrets
	src, kind := vol.CloudInit()
	if n.SecretsDir == "" || src == nil || (src.UserDataSecretRef == nil && src.NetworkDataSecretRef == nil) {
		return out, nil
	}
	if err := checkVolumeName(vol.Name); err != nil {
		return out, err
	}
	read := func(ref *v1.LocalObjectReference, field, use string, keys []string) ([]byte, error) {
		if ref == nil {
			return nil, nil
		}
		data, _, err := ReadMountedSecret(filepath.Join(n.SecretsDir, vol.Name, use), keys...)
		if errors.Is(err, errNoKey) {
			return nil, fmt.Errorf("Secret %q (%s.%s) has no key %s; put the data under one of them",
				ref.Name, kind, field, strings.Join(keys, " or "))
		}
		if err != nil {
			return nil, fmt.Errorf("reading Secret %q (%s.%s): %w", ref.Name, kind, field, err)
		}
		return data, nil
	}
	var err error
	if out.UserData, err = read(src.UserDataSecretRef, "secretRef", protocol.UserDataSecret, userDataKeys); err != nil {
		return out, err
	}
	out.NetworkData, err = read(src.NetworkDataSecretRef, "networkDataSecretRef", protocol.NetworkDataSecret, networkDataKeys)
	return out, err
}
