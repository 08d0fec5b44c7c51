package nodeagent

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

// LauncherUser is the launcher's uid and gid (107): the agent hands it what it puts in a Pod's
// emptyDir (sockets, the capabilities seed).
const LauncherUser = 107

// agentDir is the node agent's own state under the run directory (root only): shutdown
// deadlines that must survive a restart of the agent.
const agentDir = "agent"

// nodeDirs is the node agent's view of the node: its run directory (the agent's own state) and
// the kubelet's Pod directories, where each Pod it talks to (launcher, upload and clone source
// Pods) shares its emptyDir "run" with the agent. Every path below them is built from names the
// agent controls (Pod UIDs, fixed file names) and resolved component by component without
// following symlinks, since the Pods (launchers are uid 107, running guests) own their
// emptyDirs and could plant links there.
type nodeDirs struct {
	// root is the run directory (Options.RunDir).
	root string
	// pods is the kubelet's Pod directories (Options.KubeletPodsDir, protocol.KubeletPodsDir).
	pods string
}

// openBeneath opens rel (a path of fixed or validated names) below the run directory without
// following any symlink and without leaving the run directory.
func (d nodeDirs) openBeneath(rel string, flags int, mode uint32) (int, error) {
	return openBeneathRoot(d.root, rel, flags, mode)
}

// openBeneathRoot opens rel below root without following any symlink and without leaving root.
func openBeneathRoot(root, rel string, flags int, mode uint32) (int, error) {
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

// openEmptyDir opens the directory Pod podUID shares with the agent, its emptyDir "run"
// (launcherpodapi.RunDirVolumeName) below the kubelet's Pod directories, without following a link.
func (d nodeDirs) openEmptyDir(podUID types.UID, flags int) (int, error) {
	if err := checkUID(podUID); err != nil {
		return -1, err
	}
	if d.pods == "" {
		return -1, errors.New("no kubelet Pod directories (--kubelet-pods-dir) to find Pods' emptyDirs in")
	}
	return openBeneathRoot(d.pods, protocol.EmptyDirPath(string(podUID), launcherpodapi.RunDirVolumeName), flags|unix.O_DIRECTORY, 0)
}

// seedLauncher copies the node's QEMU capabilities seed (capsDir) into the emptyDir of
// launcher Pod podUID, for its libvirtd. It reports false, without error, while the kubelet
// has not created the emptyDir yet.
func (d nodeDirs) seedLauncher(podUID types.UID, capsDir string) (bool, error) {
	fd, err := d.openEmptyDir(podUID, unix.O_RDONLY)
	if errors.Is(err, unix.ENOENT) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	dir := os.NewFile(uintptr(fd), "emptyDir of Pod "+string(podUID))
	defer dir.Close()
	_, err = capsseed.CopyBeneath(capsDir, dir, protocol.CapabilitiesSeed, capsseed.Owner{UID: LauncherUser, GID: LauncherUser})
	return err == nil, err
}

// checkUID refuses anything but a Kubernetes UID as a path component.
func checkUID(uid types.UID) error {
	s := string(uid)
	if s == "" || len(s) > 64 || strings.ContainsAny(s, "/.\x00") || len(validation.IsDNS1123Subdomain(strings.ToLower(s))) > 0 {
		return fmt.Errorf("%q is not a UID", s)
	}
	return nil
}

// mkdirBeneath creates rel's last component below the run directory (its parent must exist)
// with mode, owned by uid/gid, or checks that the existing one is a directory.
func (d nodeDirs) mkdirBeneath(rel string, mode uint32, uid int) error {
	parent, name := filepath.Split(rel)
	parentFD, err := d.openBeneath(filepath.Clean(parent), unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer unix.Close(parentFD)
	if err := unix.Mkdirat(parentFD, name, mode); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("creating %s: %w", filepath.Join(d.root, rel), err)
	}
	fd, err := unix.Openat(parentFD, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("%s is not a directory: %w", filepath.Join(d.root, rel), err)
	}
	defer unix.Close(fd)
	if err := unix.Fchown(fd, uid, uid); err != nil {
		return fmt.Errorf("chown %s: %w", filepath.Join(d.root, rel), err)
	}
	return unix.Fchmod(fd, mode)
}

// ensureBase creates the run directory and its agent/ directory.
func (d nodeDirs) ensureBase() error {
	if err := os.MkdirAll(d.root, 0o755); err != nil {
		return err
	}
	return d.mkdirBeneath(agentDir, 0o700, 0)
}

// dialLauncher returns a dialer for the command socket of launcher Pod podUID.
func (d nodeDirs) dialLauncher(podUID types.UID) func(context.Context) (net.Conn, error) {
	return func(ctx context.Context) (net.Conn, error) {
		return d.dialSocket(ctx, podUID, protocol.CommandSocket)
	}
}

// dialSocket connects to the socket name (a fixed protocol name) in the directory Pod podUID
// shares with the agent (openEmptyDir). The socket is opened with O_PATH|O_NOFOLLOW below that
// directory and must be a socket; the connection then goes through the descriptor's /proc
// path, so a link a launcher planted at its name is never followed.
func (d nodeDirs) dialSocket(ctx context.Context, podUID types.UID, name string) (net.Conn, error) {
	dirFD, err := d.openEmptyDir(podUID, unix.O_PATH)
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
