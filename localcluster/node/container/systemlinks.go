package container

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// resolveSystemLinks replaces the symlinks in target that only root could have made or can
// change (the link and its directory owned by root, the directory writable by no one else,
// such as /var/run -> /run) by what they point to, so that a Pod can mount at the usual paths
// of a distribution. Any other symlink stays in the path and createTarget refuses it: a link a
// user could plant is never followed.
func resolveSystemLinks(target string) (string, error) {
	parts := strings.Split(strings.TrimPrefix(target, "/"), "/")
	cur := "/"
	for hops := 0; len(parts) > 0; {
		next := filepath.Join(cur, parts[0])
		fi, err := os.Lstat(next)
		if errors.Is(err, os.ErrNotExist) {
			return filepath.Join(append([]string{cur}, parts...)...), nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&os.ModeSymlink == 0 || !systemOwned(fi, cur) {
			cur, parts = next, parts[1:]
			continue
		}
		if hops++; hops > 40 {
			return "", fmt.Errorf("target %s: too many levels of symbolic links", target)
		}
		dest, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(cur, dest)
		}
		resolved := filepath.Clean(filepath.Join(append([]string{dest}, parts[1:]...)...))
		cur, parts = "/", strings.Split(strings.TrimPrefix(resolved, "/"), "/")
	}
	return cur, nil
}

// systemOwned reports whether link (in directory dir) belongs to root and sits in a
// root-owned directory no one else may write.
func systemOwned(link os.FileInfo, dir string) bool {
	st, ok := link.Sys().(*syscall.Stat_t)
	if !ok || st.Uid != 0 {
		return false
	}
	di, err := os.Lstat(dir)
	if err != nil {
		return false
	}
	dst, ok := di.Sys().(*syscall.Stat_t)
	return ok && dst.Uid == 0 && di.Mode().Perm()&0o022 == 0
}
