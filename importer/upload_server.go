package importer

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// uploadSocketMode is the upload socket's file mode: the node agent relaying the requests
// reaches it as the importer's user or group.
const uploadSocketMode fs.FileMode = 0o660

// uploadShutdownTimeout bounds the wait for the answers being written when the server stops.
const uploadShutdownTimeout = 5 * time.Second

// ImportUpload imports an image uploaded through the upload protocol: it serves o.Source, an
// *UploadSource, on the unix socket at its Socket while Import(ctx, o) runs. After a failure
// it keeps answering until a request has been told (422 with the message) or the source's
// FailureGrace has passed; then, or as soon as the import succeeded, it stops the server,
// removes the socket and returns Import's result.
func ImportUpload(ctx context.Context, o Options) (Result, error) {
	s, ok := o.Source.(*UploadSource)
	if !ok {
		return Result{}, permanentf("an upload import needs an *UploadSource, not %T", o.Source)
	}
	if err := s.Validate(); err != nil {
		return Result{}, err
	}
	if err := waitForOwnDir(ctx, filepath.Dir(s.Socket), uploadDirTimeout); err != nil {
		return Result{}, err
	}
	l, err := listenUploadSocket(s.Socket)
	if err != nil {
		return Result{}, err
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(l)
	}()
	res, err := Import(ctx, o)
	s.finish(err)
	if err != nil {
		s.awaitAnswer(ctx)
	}
	shutdown, cancel := context.WithTimeout(context.Background(), uploadShutdownTimeout)
	if srv.Shutdown(shutdown) != nil {
		_ = srv.Close()
	}
	cancel()
	<-served
	return res, err
}

// uploadDirTimeout bounds the wait for the upload socket's directory to become this user's.
const uploadDirTimeout = 2 * time.Minute

// waitForOwnDir waits until dir is a directory this process's user may create the socket in:
// the upload Pod's emptyDir, which the kubelet creates writable by all before the container
// starts (the wait covers a volume that is not there yet). A transient failure when it does not
// happen in time: the Pod restarts and waits again.
func waitForOwnDir(ctx context.Context, dir string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		fi, err := os.Lstat(dir)
		if err == nil && !fi.IsDir() {
			return permanentf("the upload directory %s is not a directory (%s)", dir, describeMode(fi.Mode()))
		}
		if err == nil && unix.Access(dir, unix.W_OK|unix.X_OK) == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the upload directory %s did not become writable by this user (uid %d) within %s: is vireo-nodeagent running on this node?", dir, os.Getuid(), timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// awaitAnswer waits until a request was answered with the failure, the grace has passed or ctx
// ends.
func (s *UploadSource) awaitAnswer(ctx context.Context) {
	grace := s.FailureGrace
	if grace <= 0 {
		grace = DefaultUploadFailureGrace
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-s.answered:
	case <-t.C:
	case <-ctx.Done():
	}
}

// listenUploadSocket listens on a unix socket at path, with mode uploadSocketMode. A socket
// already there (a previous importer's) is replaced; anything else, a symbolic link included,
// is refused rather than followed or removed.
func listenUploadSocket(path string) (net.Listener, error) {
	st, err := os.Lstat(path)
	switch {
	case err == nil && st.Mode().Type() == fs.ModeSocket:
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, permanentf("removing the stale upload socket %s: %w", path, err)
		}
	case err == nil:
		return nil, permanentf("the upload socket path %s exists and is not a socket (%s): refusing to replace it", path, describeMode(st.Mode()))
	case !errors.Is(err, fs.ErrNotExist):
		return nil, permanentf("the upload socket path: %w", err)
	}
	// The socket's mode is set before it is bound, so that it is never reachable more widely;
	// the umask may take bits away, which the chmod below puts back.
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var cerr error
		if err := c.Control(func(fd uintptr) { cerr = syscall.Fchmod(int(fd), uint32(uploadSocketMode)) }); err != nil {
			return err
		}
		return cerr
	}}
	l, err := lc.Listen(context.Background(), "unix", path)
	if err != nil {
		return nil, permanentf("listening on the upload socket: %w", err)
	}
	if err := chmodSocket(path); err != nil {
		l.Close()
		return nil, permanentf("setting the mode of the upload socket %s: %w", path, err)
	}
	return l, nil
}

// chmodSocket gives the socket at path uploadSocketMode without following a symbolic link put
// in its place.
func chmodSocket(path string) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return fmt.Errorf("%s was replaced by something that is not a socket", path)
	}
	if fs.FileMode(st.Mode).Perm() == uploadSocketMode {
		return nil
	}
	// chmod through the O_PATH descriptor: fchmod does not take one.
	return os.Chmod("/proc/self/fd/"+strconv.Itoa(fd), uploadSocketMode)
}

// describeMode names a file's type for a message.
func describeMode(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m.IsRegular():
		return "a regular file"
	}
	return "type " + m.Type().String()
}
