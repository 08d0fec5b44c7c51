package embeddedetcd

import (
	"context"
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
	}
}
