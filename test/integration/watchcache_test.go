package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/storage/etcd3"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/vireo-dev/vireo/apiserver"
	"github.com/vireo-dev/vireo/apiserver/embeddedetcd"
	"github.com/vireo-dev/vireo/test/framework"
)

// TestQuietPagedListsStayInTheWatchCache: once etcd is compacted past the last change of the
// VMIs (as it is every five minutes, quiet VMIs or not), the pages after the first of a paged
// list are still served from the watch cache, not read and decoded from etcd; a continue token
// older than the compaction is still refused 410 Gone. The test compacts etcd itself, as
// kube-apiserver's compactor does.
func TestQuietPagedListsStayInTheWatchCache(t *testing.T) {
	ctx := context.Background()
	etcd, err := embeddedetcd.Start(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer etcd.Close()
	s, err := framework.StartAPIServerWithOptions(ctx, t.TempDir(), func(o *apiserver.Options) {
		o.Recommended.Etcd.StorageConfig.Transport.ServerList = []string{etcd.ClientURL}
		// Its compactor only watches the compactions of others within the test's time.
		o.Recommended.Etcd.StorageConfig.CompactionInterval = time.Hour
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	vmis := s.Client.KubevirtV1().VirtualMachineInstances("quiet")
	for _, name := range []string{"a", "b"} {
		if _, err := vmis.Create(ctx, newVMI(name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	first, err := vmis.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil || first.Continue == "" {
		t.Fatalf("first page of two VMIs: %v, continue %q", err, first.Continue)
	}
	old := first.Continue // its revision will be compacted
	if _, err := vmis.Create(ctx, newVMI("c"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{etcd.ClientURL}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	// As kube-apiserver's compactor: the first round only records the revision, the next
	// compacts to it (past every VMI's change) and publishes it, which vireo-apiserver watches.
	version, rev, _, err := etcd3.Compact(ctx, cli, 0, 0)
	if err == nil {
		_, _, _, err = etcd3.Compact(ctx, cli, version, rev)
	}
	if err != nil {
		t.Fatalf("compacting etcd: %v", err)
	}
	// The watch cache reads the compacted revision every 15 s: once it did, the old token's
	// snapshot is gone (and etcd's revision too).
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := vmis.List(ctx, metav1.ListOptions{Limit: 1, Continue: old})
		return apierrors.IsResourceExpired(err) || apierrors.IsGone(err), nil
	}); err != nil {
		t.Fatalf("a continue token from before the compaction was not refused 410 Gone: %v", err)
	}

	before := etcdLists(t)
	var names []string
	opts := metav1.ListOptions{Limit: 1}
	for {
		page, err := vmis.List(ctx, opts)
		if err != nil {
			t.Fatalf("paging through the VMIs after the compaction: %v", err)
		}
		for _, v := range page.Items {
			names = append(names, v.Name)
		}
		if page.Continue == "" {
			break
		}
		opts.Continue = page.Continue
	}
	if strings.Join(names, ",") != "a,b,c" {
		t.Errorf("paged list after the compaction: %v, want a, b, c", names)
	}
	if n := etcdLists(t) - before; n != 0 {
		t.Errorf("%v of the paged list's 3 pages were read from etcd, not from the watch cache", n)
	}
}

// etcdLists is how many lists of VMIs vireo-apiserver read from etcd (the process's servers').
func etcdLists(t *testing.T) float64 {
	t.Helper()
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, f := range families {
		if f.GetName() != "apiserver_storage_list_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["resource"] == "virtualmachineinstances" && labels["storage"] == "etcd" {
				total += m.GetCounter().GetValue()
			}
		}
	}
	return total
}
