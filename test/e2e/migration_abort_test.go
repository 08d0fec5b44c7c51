package e2e

import (
	"context"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/nodeagent"
)

// setMigrationBandwidth patches bandwidthPerMigration ("" removes it) and waits until
// vireo-controller took the change up; the node agents read it from the same object.
func setMigrationBandwidth(t *testing.T, bandwidth string) {
	t.Helper()
	value := "null"
	if bandwidth != "" {
		value = `"` + bandwidth + `"`
	}
	kubectl(t, "-n", v1.InstallNamespace, "patch", "kubevirt", settingsName, "--type", "merge",
		"-p", `{"spec":{"configuration":{"migrations":{"bandwidthPerMigration":`+value+`}}}}`)
	// Not t.Context(): the setting is also restored in a cleanup, when that has ended.
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		kv, err := vireo.KubevirtV1().KubeVirts(v1.InstallNamespace).Get(ctx, settingsName, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		g := kv.Status.ObservedGeneration
		return g != nil && *g == kv.Generation, nil
	})
	if err != nil {
		t.Fatalf("the bandwidth setting %q was not taken up: %v", bandwidth, err)
	}
}

// vmiMigrationState waits until the VMI's migration state for migration uid satisfies done.
func vmiMigrationState(t *testing.T, ns, name, uid, what string, done func(*v1.VirtualMachineInstanceMigrationState) bool) *v1.VirtualMachineInstance {
	t.Helper()
	return waitVMI(t, ns, name, 2*time.Minute, what, func(v *v1.VirtualMachineInstance) bool {
		ms := v.Status.MigrationState
		return ms != nil && string(ms.MigrationUID) == uid && done(ms)
	})
}

// TestLiveMigrationAbortAndFailure: with the bandwidth throttled so a migration can be caught
// running, (1) deleting the migration aborts it: the guest stays on the source, running, its
// console session open, the VM shown Migrating meanwhile; (2) killing the target's node agent
// fails the migration and the guest again stays on the source; (3) unthrottled, the migration
// succeeds and the open console session ends with a message saying the VMI migrated.
func TestLiveMigrationAbortAndFailure(t *testing.T) {
	ns := namespace(t)
	applyExample(t, ns, "vm-demo.yaml")
	vmi := waitPhase(t, ns, "demo", v1.Running, 2*time.Minute)
	source := vmi.Status.NodeName
	bind(t, ns, "mover", "kubevirt.io:migrate")
	con, _, err := dialStream(t, admin, streamPath("subresources.kubevirt.io", ns, "demo", "console"))
	if err != nil {
		t.Fatal(err)
	}
	echo42(t, con)
	t.Cleanup(func() { setMigrationBandwidth(t, "") })
	setMigrationBandwidth(t, "1Mi")

	// (1) Abort by deletion while Running.
	m := startMigration(t, ns, "demo", "")
	waitMigration(t, ns, m.Name, v1.MigrationRunning, 2*time.Minute)
	eventuallyWithin(t, "the VM shows Migrating", 30*time.Second, func() error {
		vm, err := vireo.KubevirtV1().VirtualMachines(ns).Get(t.Context(), "demo", metav1.GetOptions{})
		if err != nil || vm.Status.PrintableStatus != v1.VirtualMachineStatusMigrating {
			return fmt.Errorf("printableStatus %q (%v)", vm.Status.PrintableStatus, err)
		}
		return nil
	})
	checkMigrationMetrics(t, ns, source)
	kubectl(t, "-n", ns, "delete", "vmim", m.Name, "--wait=false")
	vmi = vmiMigrationState(t, ns, "demo", string(m.UID), "the migration aborted", func(ms *v1.VirtualMachineInstanceMigrationState) bool {
		return ms.Failed && ms.EndTimestamp != nil
	})
	ms := vmi.Status.MigrationState
	if !ms.AbortRequested || ms.AbortStatus != v1.MigrationAbortSucceeded || !strings.Contains(ms.FailureReason, "abort") {
		t.Errorf("aborted migration's state: %+v", ms)
	}
	if vmi.Status.Phase != v1.Running || vmi.Status.NodeName != source {
		t.Errorf("after the abort: phase %s on %s, want Running on %s", vmi.Status.Phase, vmi.Status.NodeName, source)
	}
	waitLauncherPods(t, ns, vmi, 1)
	eventuallyWithin(t, "the aborted migration is gone", time.Minute, func() error {
		if _, err := vireo.KubevirtV1().VirtualMachineInstanceMigrations(ns).Get(t.Context(), m.Name, metav1.GetOptions{}); err == nil {
			return fmt.Errorf("still there")
		}
		return nil
	})
	if err := con.ended(); err != nil {
		t.Fatalf("the console session ended during the aborted migration: %v", err)
	}
	echo42(t, con)

	// (2) The target's node agent dies mid-migration.
	m = startMigration(t, ns, "demo", "")
	m = waitMigration(t, ns, m.Name, v1.MigrationRunning, 2*time.Minute)
	killNodeAgent(t, m.Status.MigrationState.TargetNode)
	m = waitMigration(t, ns, m.Name, v1.MigrationFailed, 3*time.Minute)
	if m.Status.MigrationState == nil || m.Status.MigrationState.FailureReason == "" {
		t.Errorf("the failed migration's state: %+v", m.Status.MigrationState)
	}
	t.Logf("migration failed: %s", m.Status.MigrationState.FailureReason)
	vmi = waitPhase(t, ns, "demo", v1.Running, 10*time.Second)
	if vmi.Status.NodeName != source {
		t.Errorf("after the failed migration the VMI is on %s, want %s", vmi.Status.NodeName, source)
	}
	waitLauncherPods(t, ns, vmi, 1)
	echo42(t, con)

	// (3) Unthrottled, it moves; the open console session ends saying why.
	setMigrationBandwidth(t, "")
	m = startMigration(t, ns, "demo", "")
	waitMigration(t, ns, m.Name, v1.MigrationSucceeded, 3*time.Minute)
	if text := con.closeText(t, 30*time.Second); text != nodeagent.CloseVMIMigrated {
		t.Errorf("the console session ended with %q, want %q", text, nodeagent.CloseVMIMigrated)
	}
	moved, _, err := dialStream(t, admin, streamPath("subresources.kubevirt.io", ns, "demo", "console"))
	if err != nil {
		t.Fatalf("the console after the migration: %v", err)
	}
	echo42(t, moved)
}

// checkMigrationMetrics scrapes the source node agent's /metrics during a running migration of
// VMI demo: the data processed so far is there, for a reader bound to vireo:metrics-reader.
func checkMigrationMetrics(t *testing.T, ns, node string) {
	t.Helper()
	scraper := serviceAccountToken(t, ns, "scraper")
	bindMetricsReader(t, ns, "scraper")
	pods, err := kube.CoreV1().Pods(v1.InstallNamespace).List(t.Context(), metav1.ListOptions{
		LabelSelector: "app.kubernetes.io/name=vireo-nodeagent", FieldSelector: "spec.nodeName=" + node})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("node agent of %s: %v", node, err)
	}
	url := "https://" + net.JoinHostPort(pods.Items[0].Status.PodIP, "8443") + "/metrics"
	series := regexp.MustCompile(`(?m)^kubevirt_vmi_migration_data_processed_bytes\{name="demo",namespace="` + ns + `",node="` + node + `"\} ([0-9.e+]+)$`)
	eventuallyWithin(t, "the migration's progress in the source node agent's metrics", 30*time.Second, func() error {
		code, body := scrape(t, url, scraper)
		if code != 200 {
			return fmt.Errorf("GET %s: %d %.200s", url, code, body)
		}
		m := series.FindStringSubmatch(body)
		if m == nil {
			return fmt.Errorf("no data processed series of demo in %s", url)
		}
		if v, err := strconv.ParseFloat(m[1], 64); err != nil || v <= 0 {
			return fmt.Errorf("data processed %s", m[1])
		}
		return nil
	})
}

// waitLauncherPods waits until the VMI has n launcher Pods.
func waitLauncherPods(t *testing.T, ns string, vmi *v1.VirtualMachineInstance, n int) {
	t.Helper()
	eventuallyWithin(t, fmt.Sprintf("%d launcher Pods", n), time.Minute, func() error {
		pods, err := kube.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: v1.CreatedByLabel + "=" + string(vmi.UID)})
		if err != nil || len(pods.Items) != n {
			return fmt.Errorf("%d launcher Pods (%v)", len(pods.Items), err)
		}
		return nil
	})
}
