// Package nodedirs is the node agent's view of the node's directories: its own run directory
// (shutdown deadlines that must survive a restart) and the kubelet's Pod directories, where
// each Pod the agent talks to (launcher, upload and clone source Pods) shares its emptyDir
// "run" with the agent. Every path below them is built from names the agent controls (Pod
// UIDs, fixed file names) and resolved component by component without following symlinks,
// since the Pods (launchers are uid 107, running guests) own their emptyDirs and could plant
// links there. Sockets are dialled and bound through a descriptor's /proc path, which also
// keeps the kubelet's long paths under a socket address's 108 bytes.
package nodedirs

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/vireo-dev/vireo/internal/launcherpodapi"
	"github.com/vireo-dev/vireo/launcher/protocol"
	"github.com/vireo-dev/vireo/launcher/protocol/capsseed"
)

// launcherUser owns what the agent puts in a Pod's emptyDir (sockets, the capabilities seed).
const launcherUser = int(launcherpodapi.LauncherUser)

// AgentDir is the node agent's own state below the run directory (root only).
const AgentDir = "agent"

// Dirs are the directories of one node.
type Dirs struct {
	// Root is the agent's run directory.
	Root string
	// Pods is the kubelet's Pod directories (its --root-dir's pods/).
	Pods string
}

// openBeneath opens rel below root without following any symlink and without leaving root.
func openBeneath(root, rel string, flags int, mode uint32) (int, error) {
	rootFD, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("opening %s: %w", root, err)
	}
	defer unix.Close(rootFD)
	fd, err := unix.Openat2(rootFD, rel, &unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Mode: uint64(mode),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
	if err != nil {
		return -1, fmt.Errorf("opening %s below %s without symlinks: %w", rel, root, err)
	}
	return fd, nil
}

// OpenEmptyDir opens the directory Pod podUID shares with the agent, its emptyDir "run"
// (launcherpodapi.RunDirVolumeName) below the kubelet's Pod directories, without following a link.
func (d Dirs) OpenEmptyDir(podUID types.UID, flags int) (int, error) {
	if err := CheckUID(podUID); err != nil {
		return -1, err
	}
	if d.Pods == "" {
		return -1, errors.New("no kubelet Pod directories (--kubelet-pods-dir) to find Pods' emptyDirs in")
	}
	return openBeneath(d.Pods, protocol.EmptyDirPath(string(podUID), launcherpodapi.RunDirVolumeName), flags|unix.O_DIRECTORY, 0)
}

// SeedLauncher copies the node's QEMU capabilities seed (capsDir) into the emptyDir of
// launcher Pod podUID, for its libvirtd. It reports false, without error, while the kubelet
// has not created the emptyDir yet.
func (d Dirs) SeedLauncher(podUID types.UID, capsDir string) (bool, error) {
	fd, err := d.OpenEmptyDir(podUID, unix.O_RDONLY)
	if errors.Is(err, unix.ENOENT) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	dir := os.NewFile(uintptr(fd), "emptyDir of Pod "+string(podUID))
	defer dir.Close()
	_, err = capsseed.CopyBeneath(capsDir, dir, protocol.CapabilitiesSeed, capsseed.Owner{UID: launcherUser, GID: launcherUser})
	return err == nil, err
}

// CheckUID refuses anything but a Kubernetes UID as a path component.
func CheckUID(uid types.UID) error {
	s := string(uid)
	if s == "" || len(s) > 64 || strings.ContainsAny(s, "/.\x00") || len(validation.IsDNS1123Subdomain(strings.ToLower(s))) > 0 {
		return fmt.Errorf("%q is not a UID", s)
	}
	return nil
}

// EnsureBase creates the run directory and its agent directory (root only; a link in its
// place is refused).
func (d Dirs) EnsureBase() error {
	if err := os.MkdirAll(d.Root, 0o755); err != nil {
		return err
	}
	rootFD, err := openBeneath(d.Root, ".", unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer unix.Close(rootFD)
	path := filepath.Join(d.Root, AgentDir)
	if err := unix.Mkdirat(rootFD, AgentDir, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	fd, err := unix.Openat(rootFD, AgentDir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("%s is not a directory: %w", path, err)
	}
	defer unix.Close(fd)
	if err := unix.Fchown(fd, 0, 0); err != nil {
		return fmt.Errorf("chown %s: %w", path, err)
	}
	return unix.Fchmod(fd, 0o700)
}

// DialLauncher returns a dialer for the command socket of launcher Pod podUID.
func (d Dirs) DialLauncher(podUID types.UID) func(context.Context) (net.Conn, error) {
	return func(ctx context.Context) (net.Conn, error) {
		return d.DialSocket(ctx, podUID, protocol.CommandSocket)
	}
}

// DialSocket connects to the socket name (a fixed protocol name) in the directory Pod podUID
// shares with the agent (OpenEmptyDir). The socket is opened with O_PATH|O_NOFOLLOW below that
// directory and must be a socket; the connection then goes through the descriptor's /proc
// path, so a link a launcher planted at its name is never followed.
func (d Dirs) DialSocket(ctx context.Context, podUID types.UID, name string) (net.Conn, error) {
	dirFD, err := d.OpenEmptyDir(podUID, unix.O_PATH)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dirFD)
	fd, err := unix.Openat(dirFD, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("opening %s of Pod %s without following a link: %w", name, podUID, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return nil, fmt.Errorf("the launcher's %s of Pod %s is not a socket", name, podUID)
	}
	var dialer net.Dialer
	return dialer.DialContext(ctx, "unix", "/proc/self/fd/"+strconv.Itoa(fd))
}

// ListenSocket binds the socket name (a fixed protocol name) in the directory of Pod podUID
// for the launcher's user. The directory is opened without symlinks (OpenEmptyDir) and the
// socket bound and handed over through that descriptor, so nothing the Pod planted is
// followed; whatever was at the name before is removed.
func (d Dirs) ListenSocket(podUID types.UID, name string) (net.Listener, error) {
	dirFD, err := d.OpenEmptyDir(podUID, unix.O_PATH)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dirFD)
	if err := unix.Unlinkat(dirFD, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return nil, fmt.Errorf("removing the old %s of Pod %s: %w", name, podUID, err)
	}
	ln, err := net.Listen("unix", "/proc/self/fd/"+strconv.Itoa(dirFD)+"/"+name)
	if err != nil {
		return nil, fmt.Errorf("listening on %s of Pod %s: %w", name, podUID, err)
	}
	// The listener removes its path on Close: the path is the descriptor's, gone by then.
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	if err := unix.Fchownat(dirFD, name, launcherUser, launcherUser, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		ln.Close()
		return nil, fmt.Errorf("giving %s of Pod %s to the launcher: %w", name, podUID, err)
	}
	return ln, nil
}
