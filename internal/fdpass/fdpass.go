// Package fdpass sends open files with a small message over a unix socket (SCM_RIGHTS): how a
// launcher hands its network namespace and a /dev/net/tun descriptor to its node agent, and the
// agent hands them on to its network helper.
package fdpass

import (
	"errors"
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// MaxMessage is the largest message Receive accepts.
const MaxMessage = 64 << 10

// MaxFiles is the most descriptors one message may carry.
const MaxFiles = 4

// Send writes msg with files attached in one datagram-like write: the receiver gets both or
// neither. msg must not be empty (a zero-length write carries no descriptors on a stream).
func Send(conn *net.UnixConn, msg []byte, files ...*os.File) error {
	if len(msg) == 0 || len(msg) > MaxMessage {
		return fmt.Errorf("fdpass: message of %d bytes (1 to %d allowed)", len(msg), MaxMessage)
	}
	if len(files) > MaxFiles {
		return fmt.Errorf("fdpass: %d files (at most %d)", len(files), MaxFiles)
	}
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	n, oobn, err := conn.WriteMsgUnix(msg, oob, nil)
	if err != nil {
		return err
	}
	if n != len(msg) || oobn != len(oob) {
		return fmt.Errorf("fdpass: short write (%d of %d bytes, %d of %d control bytes)", n, len(msg), oobn, len(oob))
	}
	return nil
}

// Receive reads one message written by Send and the files that came with it. The message must
// arrive in one read (Send writes it at once and it is at most MaxMessage bytes). Files
// beyond MaxFiles are closed and make it fail.
func Receive(conn *net.UnixConn) ([]byte, []*os.File, error) {
	buf := make([]byte, MaxMessage)
	oob := make([]byte, unix.CmsgSpace(MaxFiles*4))
	n, oobn, flags, _, err := conn.ReadMsgUnix(buf, oob)
	if err != nil {
		return nil, nil, err
	}
	files, ferr := parseRights(oob[:oobn])
	if flags&unix.MSG_CTRUNC != 0 && ferr == nil {
		ferr = errors.New("fdpass: more descriptors than allowed were sent")
	}
	if ferr != nil {
		CloseAll(files)
		return nil, nil, ferr
	}
	if n == 0 {
		CloseAll(files)
		return nil, nil, errors.New("fdpass: the peer closed the connection without a message")
	}
	return buf[:n], files, nil
}

func parseRights(oob []byte) ([]*os.File, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, fmt.Errorf("fdpass: control message: %w", err)
	}
	var files []*os.File
	var firstErr error
	for i := range msgs {
		fds, err := unix.ParseUnixRights(&msgs[i])
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("fdpass: control message: %w", err)
			}
			continue
		}
		for _, fd := range fds {
			unix.CloseOnExec(fd)
			files = append(files, os.NewFile(uintptr(fd), fmt.Sprintf("fd %d from peer", fd)))
		}
	}
	return files, firstErr
}

// CloseAll closes every file of files.
func CloseAll(files []*os.File) {
	for _, f := range files {
		_ = f.Close()
	}
}
