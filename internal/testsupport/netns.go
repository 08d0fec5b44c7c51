package testsupport

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"
)

// InNetns runs fn on an OS thread that entered the named network namespace (/run/netns/name,
// as `ip netns add` makes it) and returns fn's error. The thread is never handed back to the
// scheduler: it ends with fn, so sockets fn creates stay in that namespace.
func InNetns(name string, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread, changed, ends with this goroutine
		f, err := os.Open(filepath.Join("/run/netns", name))
		if err != nil {
			errc <- err
			return
		}
		err = unix.Setns(int(f.Fd()), unix.CLONE_NEWNET)
		_ = f.Close()
		if err != nil {
			errc <- fmt.Errorf("entering network namespace %s: %w", name, err)
			return
		}
		errc <- fn()
	}()
	return <-errc
}
