package disks

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// A claim's disk.img lies in a directory its users can write (a ReadWriteMany claim is shared),
// so the name checked could name another file, or a symlink, by the time QEMU opens it. The
// launcher therefore opens disk.img once, without following links, checks that descriptor, and
// keeps it open at a fixed number for its whole life; QEMU (the same user in the same Pod)
// opens the file through the descriptor's /proc path, which reaches the checked file whatever
// the name now holds. The number is claimFDBase plus the volume's index in spec.volumes, the
// same in every launcher, and the launcher is its container's first process (PID 1), so a
// migration's target, which holds its own open of the claim at that number, opens the same
// path the source's domain names.
const claimFDBase = 1000

var (
	heldMu sync.Mutex
	// held are the descriptor numbers this process holds claims at.
	held = map[int]bool{}
)

// HeldFilesDir is the directory through which other processes of the launcher's Pod open the
// files it holds: /proc/<its PID>/fd.
func HeldFilesDir() string { return "/proc/" + strconv.Itoa(os.Getpid()) + "/fd" }

// hold keeps f open at descriptor number claimFDBase+slot (replacing what this function held
// there before, never a descriptor of anything else) and returns the path that opens it.
func hold(f *os.File, slot int) (string, error) {
	if slot < 0 || slot >= claimFDBase {
		return "", fmt.Errorf("volume index %d out of range", slot)
	}
	n := claimFDBase + slot
	heldMu.Lock()
	defer heldMu.Unlock()
	if !held[n] {
		if _, err := unix.FcntlInt(uintptr(n), unix.F_GETFD, 0); !errors.Is(err, unix.EBADF) {
			return "", fmt.Errorf("descriptor %d, where the launcher holds claims, is in use", n)
		}
	}
	if err := unix.Dup3(int(f.Fd()), n, unix.O_CLOEXEC); err != nil {
		return "", fmt.Errorf("holding %s open: %w", f.Name(), err)
	}
	held[n] = true
	return HeldFilesDir() + "/" + strconv.Itoa(n), nil
}

// heldSupportsDirectIO reports whether the held file at path (a /proc fd path, a link the
// kernel resolves to the held file itself, so it is followed) can be opened with O_DIRECT.
func heldSupportsDirectIO(path string) bool { return opensDirect(path, 0) }
