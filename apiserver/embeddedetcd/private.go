package embeddedetcd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// ensurePrivateDir creates dir with mode 0700, or accepts an existing one only if it is a
// real directory (not a symbolic link), owned by this process's user and of mode 0700
// exactly. Under a shared temporary directory another user could otherwise have created
// it first, or pointed it elsewhere with a link, and reach etcd's unauthenticated socket.
func ensurePrivateDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("creating socket directory %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("checking socket directory %s: %w", dir, err)
	}
	fix := fmt.Sprintf("remove %s (or give vireo-apiserver a shorter --data-dir)", dir)
	if fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("socket directory %s is a symbolic link, not a directory of this user; %s", dir, fix)
	}
	if !fi.IsDir() {
		return fmt.Errorf("socket directory %s exists and is not a directory; %s", dir, fix)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("socket directory %s: cannot read its owner", dir)
	}
	if uid := os.Geteuid(); st.Uid != uint32(uid) {
		return fmt.Errorf("socket directory %s is owned by uid %d, not by this process's uid %d; %s", dir, st.Uid, uid, fix)
	}
	if perm := fi.Mode().Perm(); perm != 0o700 {
		return fmt.Errorf("socket directory %s has mode %04o, want 0700 (private to its owner); %s", dir, perm, fix)
	}
	return nil
}
