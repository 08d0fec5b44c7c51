package e2e

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// partitionTable is the nftables table partitionNodes adds in a node's network namespace.
const partitionTable = "vireo-e2e-partition"

// partitionNodes drops every packet between local nodes a and b (b's address and Pod CIDR) in
// a's network namespace, which cuts both ways, until heal runs (also a cleanup). Each node
// still reaches the host: kube-apiserver, etcd, the registry.
func partitionNodes(t *testing.T, a, b int) (heal func()) {
	t.Helper()
	network := cluster.Options().Network
	node, err := kube.CoreV1().Nodes().Get(t.Context(), cluster.NodeNames()[b], metav1.GetOptions{})
	if err != nil || node.Spec.PodCIDR == "" {
		t.Fatalf("node %s and its Pod CIDR: %v (%v)", cluster.NodeNames()[b], node, err)
	}
	ns := network.NodeName(a)
	nft := func(input string, args ...string) error {
		cmd := exec.Command("ip", append([]string{"netns", "exec", ns, "nft"}, args...)...)
		cmd.Stdin = strings.NewReader(input)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("nft %s in %s: %v: %s", strings.Join(args, " "), ns, err, out)
		}
		return nil
	}
	heal = sync.OnceFunc(func() {
		if err := nft("", "delete", "table", "inet", partitionTable); err != nil {
			t.Errorf("healing the partition: %v", err)
		}
	})
	peer := fmt.Sprintf("{ %s, %s }", network.NodeAddress(b), node.Spec.PodCIDR)
	rules := fmt.Sprintf(`table inet %[1]s {
	chain forward { type filter hook forward priority -10; policy accept; ip daddr %[2]s drop; ip saddr %[2]s drop; }
	chain input { type filter hook input priority -10; policy accept; ip saddr %[2]s drop; }
	chain output { type filter hook output priority -10; policy accept; ip daddr %[2]s drop; }
}
`, partitionTable, peer)
	t.Cleanup(heal)
	if err := nft(rules, "-f", "-"); err != nil {
		t.Fatal(err)
	}
	t.Logf("partitioned %s from %s (%s)", ns, cluster.NodeNames()[b], peer)
	return heal
}

// TestLiveMigrationNetworkPartition: the two nodes are cut from each other while a guest
// migrates between them (traffic dropped, not refused: the connection stalls). The migration
// fails within 90 s (progressTimeout 10 s; libvirt's keepalive gives up on the stalled
// connection after about 30 s); the guest runs on at the source, its console
// answers, its target Pod is gone; once the network heals, the guest migrates.
func TestLiveMigrationNetworkPartition(t *testing.T) {
	ns := namespace(t)
	applyExample(t, ns, "vm-demo.yaml")
	vmi := waitPhase(t, ns, "demo", v1.Running, 2*time.Minute)
	source := slices.Index(cluster.NodeNames(), vmi.Status.NodeName)
	if source < 0 {
		t.Fatalf("VMI on node %q, not one of %v", vmi.Status.NodeName, cluster.NodeNames())
	}
	// Slow enough to be caught running; a stall is given up after 10 s.
	const defaults = `{"bandwidthPerMigration":null,"completionTimeoutPerGiB":null,"progressTimeout":null,"allowPostCopy":null}`
	t.Cleanup(func() { patchMigrationSettings(t, defaults) })
	patchMigrationSettings(t, `{"bandwidthPerMigration":"1Mi","completionTimeoutPerGiB":3000,"progressTimeout":10,"allowPostCopy":null}`)
	m := startMigration(t, ns, "demo", "")
	waitMigration(t, ns, m.Name, v1.MigrationRunning, 2*time.Minute)

	heal := partitionNodes(t, source, 1-source)
	cut := time.Now()
	var failed *v1.VirtualMachineInstanceMigration
	eventuallyWithin(t, "the migration fails", 90*time.Second, func() error {
		got, err := vireo.KubevirtV1().VirtualMachineInstanceMigrations(ns).Get(t.Context(), m.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got.Status.Phase == v1.MigrationSucceeded {
			t.Fatalf("the migration succeeded across a partition: %+v", got.Status.MigrationState)
		}
		if got.Status.Phase != v1.MigrationFailed {
			return fmt.Errorf("phase %s", got.Status.Phase)
		}
		failed = got
		return nil
	})
	ms := failed.Status.MigrationState
	t.Logf("the migration failed %s after the partition: %s", time.Since(cut).Round(100*time.Millisecond), ms.FailureReason)
	recordFigure("partition.migration_failed_seconds", time.Since(cut).Seconds(), "s", "nodes cut from each other during a live migration (progressTimeout 10 s) until it is Failed")
	// Whichever notices first ends it: the progress watch (progressTimeout) or libvirt's
	// keepalive on the connection between the two libvirtds ("client socket is closed").
	if !strings.HasPrefix(ms.FailureReason, "Live migration failed") && !strings.Contains(ms.FailureReason, "progress") {
		t.Errorf("failure reason %q does not say the live migration failed", ms.FailureReason)
	}
	vmi = waitVMI(t, ns, "demo", time.Minute, "Running at the source", func(v *v1.VirtualMachineInstance) bool {
		return v.Status.Phase == v1.Running && v.Status.NodeName == cluster.NodeNames()[source]
	})
	waitLauncherPods(t, ns, vmi, 1)
	con := openConsoleRetrying(t, ns, "demo")
	echo42(t, con)
	con.ws.Close()

	heal()
	patchMigrationSettings(t, defaults)
	again := startMigration(t, ns, "demo", "")
	waitMigration(t, ns, again.Name, v1.MigrationSucceeded, 3*time.Minute)
	waitVMI(t, ns, "demo", time.Minute, "Running on the other node", func(v *v1.VirtualMachineInstance) bool {
		return v.Status.Phase == v1.Running && v.Status.NodeName == cluster.NodeNames()[1-source]
	})
}
