package relay_test

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/vireo-dev/vireo/internal/launcherpodapi"
	"github.com/vireo-dev/vireo/launcher/protocol"
	"github.com/vireo-dev/vireo/nodeagent/nodedirs/nodedirstest"
	"github.com/vireo-dev/vireo/nodeagent/relay"
)

// TestMigrationProxyInPlace: the proxy serves the migration sockets in the source launcher's
// emptyDir, for the launcher's user, and connects each connection to the same socket of the
// target's emptyDir; a link planted at a socket's name is replaced, not followed; closing the
// proxy cuts open connections.
func TestMigrationProxyInPlace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to hand sockets to uid 107")
	}
	d := nodedirstest.New(t)
	if err := d.EnsureBase(); err != nil {
		t.Fatal(err)
	}
	source, target := types.UID("src"), types.UID("tgt")
	sourceDir, targetDir := nodedirstest.EmptyDir(t, d, source), nodedirstest.EmptyDir(t, d, target)
	victim := filepath.Join(d.Root, "victim")
	if err := os.WriteFile(victim, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(sourceDir, protocol.MigrationQEMUSocket)); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", filepath.Join(targetDir, protocol.MigrationQEMUSocket))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		_, _ = io.Copy(c, c) // echo
		c.Close()
	}()
	p, err := relay.StartSocketProxy(d, source, protocol.MigrationSockets, func(ctx context.Context, name string) (net.Conn, error) {
		return d.DialSocket(ctx, target, name)
	})
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(sourceDir, protocol.MigrationQEMUSocket)
	fi, err := os.Lstat(sock)
	if err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Sys().(*syscall.Stat_t).Uid != uint32(launcherpodapi.LauncherUser) {
		t.Fatalf("proxy socket %v (%v), want a socket of uid 107", fi, err)
	}
	if fi, err := os.Stat(victim); err != nil || fi.Sys().(*syscall.Stat_t).Uid != 0 {
		t.Errorf("the planted link's target changed owner: %v %v", fi, err)
	}
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("through the proxy: %q %v", buf, err)
	}
	p.Close()
	if _, err := c.Read(buf); err == nil {
		t.Error("a connection survived the proxy's close")
	}
}
