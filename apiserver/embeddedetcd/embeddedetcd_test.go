package embeddedetcd

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestLongDataDirectory starts etcd under a path too long for a unix socket and keeps
// the data across a restart.
func TestLongDataDirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd")
	}
	dir := filepath.Join(t.TempDir(), strings.Repeat("a-rather-long-directory-name/", 4))
	ctx := context.Background()
	for round := range 2 {
		s, err := Start(ctx, dir)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		want, _ := ClientURL(dir)
		if s.ClientURL != want || len(strings.TrimPrefix(s.ClientURL, "unix://")) > 100 {
			t.Fatalf("client URL %q (ClientURL says %q)", s.ClientURL, want)
		}
		cli, err := clientv3.New(clientv3.Config{Endpoints: []string{s.ClientURL}, DialTimeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if round == 0 {
			_, err = cli.Put(ctx, "/k", "v")
		} else {
			var resp *clientv3.GetResponse
			resp, err = cli.Get(ctx, "/k")
			if err == nil && (len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "v") {
				t.Errorf("after restart: %v", resp.Kvs)
			}
		}
		cli.Close()
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		sockets := filepath.Dir(strings.TrimPrefix(s.ClientURL, "unix://"))
		if _, err := os.Lstat(sockets); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the fallback socket directory %s is left after Close (%v)", sockets, err)
		}
	}
}

// TestStartRefusesAFallbackSocketDirectoryOthersCanEnter plants the fallback socket
// directory before Start, as another local user could under /tmp.
func TestStartRefusesAFallbackSocketDirectoryOthersCanEnter(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join(t.TempDir(), strings.Repeat("a-rather-long-directory-name/", 4)))
	if err != nil {
		t.Fatal(err)
	}
	planted := socketDir(dir)
	if planted == dir {
		t.Fatal("test setup: the data directory's path is short enough for its own sockets")
	}
	if err := os.Mkdir(planted, 0o777); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(planted) })
	if err := os.Chmod(planted, 0o777); err != nil {
		t.Fatal(err)
	}
	s, err := Start(context.Background(), dir)
	if err == nil {
		s.Close()
		t.Fatal("started with a world-writable socket directory")
	}
	if !strings.Contains(err.Error(), planted) || !strings.Contains(err.Error(), "want 0700") {
		t.Errorf("error %q does not name the directory and its problem", err)
	}
}
