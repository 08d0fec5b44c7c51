package localcluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	clientsnapshot "go.etcd.io/etcd/client/v3/snapshot"
	"go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/certpool"
)

// restoreRevisionBump moves the restored store's revision this far past the snapshot's, and the
// store is marked compacted there: every client that watched before the restore (the API
// servers' caches, informers) finds its resourceVersion compacted and lists afresh, instead of
// waiting for revisions it has already seen to come round again. etcd's documentation suggests
// a bump larger than the writes since the snapshot; a billion covers any installation.
const restoreRevisionBump = 1_000_000_000

// embeddedDataDir is vireo-apiserver's --data-dir inside its Pod (artifacts/local): the
// embedded etcd's member records its peer URL under it.
const embeddedDataDir = "/var/lib/vireo-apiserver"

// Backup writes a snapshot of the etcd that holds Vireo's objects to path (etcd's snapshot
// format, as `etcdctl snapshot save` writes it): with HA, the first vireo-etcd member's that
// answers (a snapshot is taken from one member), else vireo-apiserver's embedded etcd,
// reached through its unix socket on the first node. The snapshot is consistent; Vireo keeps
// serving meanwhile.
func (c *Cluster) Backup(ctx context.Context, path string) error {
	cfg, cleanup, err := c.vireoEtcdClientConfig()
	if err != nil {
		return err
	}
	defer cleanup()
	cfg.Context = ctx
	var failures []string
	for _, endpoint := range cfg.Endpoints {
		one := cfg
		one.Endpoints = []string{endpoint}
		if _, err = clientsnapshot.SaveWithVersion(ctx, zap.NewNop(), one, path); err == nil {
			break
		}
		failures = append(failures, fmt.Sprintf("%s: %v", endpoint, err))
	}
	if err != nil {
		return fmt.Errorf("saving a snapshot of Vireo's etcd to %s: %s", path, strings.Join(failures, "; "))
	}
	st, err := snapshot.NewV3(zap.NewNop()).Status(path)
	if err != nil {
		return fmt.Errorf("the snapshot written to %s does not read back: %w", path, err)
	}
	c.say("saved Vireo's etcd to %s: revision %d, %d keys, %d bytes", path, st.Revision, st.TotalKey, st.TotalSize)
	return nil
}

// vireoEtcdClientConfig is a client of the etcd holding Vireo's objects. The embedded etcd's
// socket path may be too long to dial (108 bytes): it is then reached through a symbolic link
// in a private temporary directory, which cleanup removes.
func (c *Cluster) vireoEtcdClientConfig() (clientv3.Config, func(), error) {
	cfg := clientv3.Config{DialTimeout: 10 * time.Second}
	if c.opts.HA {
		certs := c.artifactCertsDir()
		pair, err := tls.LoadX509KeyPair(filepath.Join(certs, "etcd-client.crt"), filepath.Join(certs, "etcd-client.key"))
		if err != nil {
			return cfg, nil, err
		}
		pool, err := certpool.FromFile(filepath.Join(certs, "etcd-ca.crt"))
		if err != nil {
			return cfg, nil, err
		}
		cfg.Endpoints = c.VireoEtcdEndpoints()
		cfg.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, RootCAs: pool, MinVersion: tls.VersionTLS12}
		return cfg, func() {}, nil
	}
	sock, err := filepath.Abs(filepath.Join(c.APIServerDataDir(), "etcd-client.sock"))
	if err != nil {
		return cfg, nil, err
	}
	if _, err := os.Stat(sock); err != nil {
		return cfg, nil, fmt.Errorf("vireo-apiserver's embedded etcd is not serving (%w): is Vireo up?", err)
	}
	cleanup := func() {}
	if len(sock) > 100 {
		dir, err := os.MkdirTemp("", "vireo-local-etcd-")
		if err != nil {
			return cfg, nil, err
		}
		cleanup = func() { _ = os.RemoveAll(dir) }
		link := filepath.Join(dir, "etcd.sock")
		if err := os.Symlink(sock, link); err != nil {
			cleanup()
			return cfg, nil, err
		}
		sock = link
	}
	cfg.Endpoints = []string{"unix://" + sock}
	return cfg, cleanup, nil
}

// Restore replaces Vireo's objects with those of a snapshot Backup wrote: it stops every
// vireo-apiserver (scales it to 0), replaces the etcd data (every vireo-etcd member's with HA,
// else the embedded etcd's; the data replaced is kept beside it, named *.replaced), and starts
// vireo-apiserver again. Guests, their Pods and the nodes are not touched: the VMIs the
// snapshot holds find their launchers still running, and are Running again as they were. A
// VMI whose launcher Pod changed since the snapshot (a migration, a restart) cannot be matched
// with its guest: its restored status names a Pod that is gone, and it fails.
func (c *Cluster) Restore(ctx context.Context, path string) error {
	st, err := snapshot.NewV3(zap.NewNop()).Status(path)
	if err != nil {
		return fmt.Errorf("%s is not an etcd snapshot: %w", path, err)
	}
	c.say("restoring Vireo's etcd from %s (revision %d, %d keys)", path, st.Revision, st.TotalKey)
	replicas, err := c.scaleAPIServer(ctx, 0)
	if err != nil {
		return err
	}
	if replicas == 0 { // a restore that failed before left it at 0: the overlay's count
		replicas = 1
		if c.opts.HA {
			replicas = 2
		}
	}
	if c.opts.HA {
		err = c.restoreVireoEtcd(ctx, path)
	} else {
		err = c.restoreEmbeddedEtcd(path)
	}
	if err != nil {
		return fmt.Errorf("%w (vireo-apiserver is scaled to 0; after mending, scale it back to %d)", err, replicas)
	}
	if _, err := c.scaleAPIServer(ctx, replicas); err != nil {
		return err
	}
	if err := c.waitForVireo(ctx, 3*time.Minute); err != nil {
		return err
	}
	if err := c.WaitForAPIServices(ctx, 90*time.Second); err != nil {
		return err
	}
	c.say("restored; Vireo serves the objects of %s", path)
	return nil
}

// restoreVireoEtcd restores the snapshot for every vireo-etcd member beside its data (all of
// them first: a member that cannot be restored leaves every member's data as it was), stops
// the members, swaps the restored data in and starts them again.
func (c *Cluster) restoreVireoEtcd(ctx context.Context, path string) error {
	members := c.vireoEtcd()
	for i, m := range members {
		_, peer := c.vireoEtcdURLs(i)
		err := restoreBeside(c.abs(c.opts.Data(m.Name)), snapshot.RestoreConfig{SnapshotPath: path, Name: m.Name,
			PeerURLs: []string{peer}, InitialCluster: c.vireoEtcdInitialCluster(), InitialClusterToken: vireoEtcdToken})
		if err != nil {
			return err
		}
	}
	for i := len(members) - 1; i >= 0; i-- {
		if err := c.stop(members[i], 30*time.Second); err != nil {
			return err
		}
	}
	for _, m := range members {
		if err := swapRestored(c.abs(c.opts.Data(m.Name))); err != nil {
			return err
		}
	}
	var started []Component
	return c.startVireoEtcd(ctx, &started)
}

// restoreEmbeddedEtcd restores the snapshot into vireo-apiserver's embedded etcd directory,
// as the member the embedded etcd is (named vireo, peer socket under its data directory).
func (c *Cluster) restoreEmbeddedEtcd(path string) error {
	peer := "unix://" + filepath.Join(embeddedDataDir, "etcd-peer.sock")
	dir := filepath.Join(c.abs(c.APIServerDataDir()), "etcd")
	err := restoreBeside(dir, snapshot.RestoreConfig{SnapshotPath: path, Name: "vireo", PeerURLs: []string{peer},
		InitialCluster: "vireo=" + peer, InitialClusterToken: "etcd-cluster"})
	if err != nil {
		return err
	}
	if err := swapRestored(dir); err != nil {
		return err
	}
	return filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, apiServerUID, apiServerUID)
	})
}

// restoreBeside restores the snapshot into dataDir.restoring, its revision bumped and
// compacted (see restoreRevisionBump); dataDir is not touched.
func restoreBeside(dataDir string, cfg snapshot.RestoreConfig) error {
	restoring := dataDir + ".restoring"
	if err := os.RemoveAll(restoring); err != nil {
		return err
	}
	cfg.OutputDataDir, cfg.RevisionBump, cfg.MarkCompacted = restoring, restoreRevisionBump, true
	if err := snapshot.NewV3(zap.NewNop()).Restore(cfg); err != nil {
		_ = os.RemoveAll(restoring)
		return fmt.Errorf("restoring for %s: %w (its data is unchanged)", dataDir, err)
	}
	return os.Chmod(restoring, 0o700)
}

// swapRestored moves dataDir aside (to dataDir.replaced, replacing an older one) and
// dataDir.restoring in its place.
func swapRestored(dataDir string) error {
	aside := dataDir + ".replaced"
	if err := os.RemoveAll(aside); err != nil {
		return err
	}
	if err := os.Rename(dataDir, aside); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return os.Rename(dataDir+".restoring", dataDir)
}

// scaleAPIServer sets vireo-apiserver's replicas and returns those it had; scaling to 0 waits
// until its Pods are gone, so none still writes to the store being replaced.
func (c *Cluster) scaleAPIServer(ctx context.Context, replicas int32) (int32, error) {
	client, err := c.kubeClient()
	if err != nil {
		return 0, err
	}
	deployments := client.AppsV1().Deployments(v1.InstallNamespace)
	scale, err := deployments.GetScale(ctx, "vireo-apiserver", metav1.GetOptions{})
	if err != nil {
		return 0, err
	}
	before := scale.Spec.Replicas
	scale.Spec.Replicas = replicas
	if _, err := deployments.UpdateScale(ctx, "vireo-apiserver", scale, metav1.UpdateOptions{}); err != nil {
		return 0, err
	}
	if replicas > 0 {
		return before, nil
	}
	c.say("scaled vireo-apiserver to 0 (it had %d replicas); waiting for its Pods to end", before)
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := client.CoreV1().Pods(v1.InstallNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=vireo-apiserver"})
		return err == nil && len(pods.Items) == 0, nil
	})
	if err != nil {
		return before, fmt.Errorf("vireo-apiserver's Pods still there 2 minutes after scaling it to 0: %w", err)
	}
	return before, nil
}
