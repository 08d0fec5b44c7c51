package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/nodeagentapi"
)

// throttleMigrations patches bandwidthPerMigration ("" removes it, and with it any
// allowPostCopy a step set) and waits until vireo-controller took the change up; the node
// agents read it from the same object. A throttled migration also gets a completion timeout
// long enough not to end it before the test does (at 1 MiB/s, KubeVirt's 150 s per GiB,
// counted in whole GiB, is not always enough).
func throttleMigrations(t *testing.T, bandwidth string) {
	t.Helper()
	value, timeout := "null", "null"
	if bandwidth != "" {
		value, timeout = `"`+bandwidth+`"`, "3000"
	}
	patchMigrationSettings(t, `{"bandwidthPerMigration":`+value+`,"completionTimeoutPerGiB":`+timeout+`,"allowPostCopy":null}`)
}

// patchMigrationSettings merges migrations into the KubeVirt object's
// spec.configuration.migrations and waits until vireo-controller has taken it up.
func patchMigrationSettings(t *testing.T, migrations string) {
	t.Helper()
	patchSettings(t, `{"configuration":{"migrations":`+migrations+`}}`)
}

// patchSettings merges spec into the KubeVirt object's spec and waits until vireo-controller
// has taken it up.
func patchSettings(t *testing.T, spec string) {
	t.Helper()
	kubectl(t, "-n", v1.InstallNamespace, "patch", "kubevirt", settingsName, "--type", "merge", "-p", `{"spec":`+spec+`}`)
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
		t.Fatalf("the settings %s were not taken up: %v", spec, err)
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
// fails the migration and the guest again stays on the source, as (2b) deleting the target
// launcher Pod does; (3) unthrottled by a MigrationPolicy that allows post-copy, the migration
// succeeds, reports the policy and the configuration it ran with, and the open console session
// ends with a message saying the VMI migrated.
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
	t.Cleanup(func() { throttleMigrations(t, "") })
	throttleMigrations(t, "1Mi")

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
	if fs := m.Status.MigrationState; fs == nil || fs.FailureReason == "" || strings.Contains(fs.FailureReason, "not completed within") ||
		strings.Contains(fs.FailureReason, "no progress") {
		t.Errorf("the failed migration's state (want a failure from the lost target, not a timeout): %+v", fs)
	}
	t.Logf("migration failed: %s", m.Status.MigrationState.FailureReason)
	vmi = waitPhase(t, ns, "demo", v1.Running, 10*time.Second)
	if vmi.Status.NodeName != source {
		t.Errorf("after the failed migration the VMI is on %s, want %s", vmi.Status.NodeName, source)
	}
	waitLauncherPods(t, ns, vmi, 1)
	echo42(t, con)

	// (2b) The target launcher Pod is deleted mid-migration (its QEMU killed with it).
	m = startMigration(t, ns, "demo", "")
	m = waitMigration(t, ns, m.Name, v1.MigrationRunning, 2*time.Minute)
	targetPod := m.Status.MigrationState.TargetPod
	kubectl(t, "-n", ns, "delete", "pod", targetPod, "--grace-period=0", "--force")
	m = waitMigration(t, ns, m.Name, v1.MigrationFailed, 2*time.Minute)
	if reason := m.Status.MigrationState.FailureReason; !strings.HasPrefix(reason, "the target launcher Pod "+targetPod) {
		t.Errorf("failure reason %q, want it to name the lost target Pod %s", reason, targetPod)
	}
	vmi = waitPhase(t, ns, "demo", v1.Running, 10*time.Second)
	if vmi.Status.NodeName != source {
		t.Errorf("after the target Pod went the VMI is on %s, want %s", vmi.Status.NodeName, source)
	}
	waitLauncherPods(t, ns, vmi, 1)
	echo42(t, con)

	// (3) A MigrationPolicy selecting the VMI and its namespace lifts the cluster's throttle and
	// allows post-copy: the migration moves; the open console session ends saying why.
	// Post-copy is allowed, not required: where the target's QEMU cannot have it, the migration
	// runs in pre-copy alone, and its configuration says so.
	policy := "unthrottled-" + ns
	t.Cleanup(func() { _, _, _ = kubectlResult("delete", "migrationpolicy", policy) })
	kubectl(t, "apply", "-f", manifestFile(t, `apiVersion: migrations.kubevirt.io/v1alpha1
kind: MigrationPolicy
metadata:
  name: `+policy+`
spec:
  selectors:
    namespaceSelector:
      kubernetes.io/metadata.name: `+ns+`
    virtualMachineInstanceSelector:
      app: demo
  bandwidthPerMigration: "0"
  completionTimeoutPerGiB: 150
  allowPostCopy: true
`))
	m = startMigration(t, ns, "demo", "")
	m = waitMigration(t, ns, m.Name, v1.MigrationSucceeded, 3*time.Minute)
	checkMigrationConfiguration(t, m.Status.MigrationState)
	if name := m.Status.MigrationState.MigrationPolicyName; name == nil || *name != policy {
		t.Errorf("the migration's policy: %v, want %s", name, policy)
	}
	if text := con.closeText(t, 30*time.Second); text != nodeagentapi.CloseVMIMigrated {
		t.Errorf("the console session ended with %q, want %q", text, nodeagentapi.CloseVMIMigrated)
	}
	moved, _, err := dialStream(t, admin, streamPath("subresources.kubevirt.io", ns, "demo", "console"))
	if err != nil {
		t.Fatalf("the console after the migration: %v", err)
	}
	echo42(t, moved)
}

// checkMigrationConfiguration checks the configuration a migration reports it ran with:
// KubeVirt's defaults with post-copy allowed, where the target's QEMU (the unprivileged qemu
// user) can have the userfaultfd post-copy needs.
func checkMigrationConfiguration(t *testing.T, ms *v1.VirtualMachineInstanceMigrationState) {
	t.Helper()
	sysctl, err := os.ReadFile("/proc/sys/vm/unprivileged_userfaultfd")
	if err != nil {
		t.Fatal(err)
	}
	postCopy := strings.TrimSpace(string(sysctl)) == "1"
	c := ms.MigrationConfiguration
	if c == nil || c.AllowPostCopy == nil || *c.AllowPostCopy != postCopy || c.CompletionTimeoutPerGiB == nil || *c.CompletionTimeoutPerGiB != 150 ||
		c.BandwidthPerMigration == nil || !c.BandwidthPerMigration.IsZero() {
		got, _ := json.Marshal(c)
		t.Errorf("the migration's configuration: %s, want KubeVirt's defaults with allowPostCopy %v (vm.unprivileged_userfaultfd %s)",
			got, postCopy, strings.TrimSpace(string(sysctl)))
	}
}

// checkMigrationMetrics scrapes the source node agent's /metrics during a running migration of
// VMI demo: the data processed so far is there, for a reader bound to vireo:metrics-reader.
func checkMigrationMetrics(t *testing.T, ns, node string) {
	t.Helper()
	scraper := serviceAccountToken(t, ns, "scraper")
	bindMetricsReader(t, ns, "scraper")
	url := nodeAgentMetricsURLs(t, node)[0]
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

// nodeAgentMetricsURLs are the /metrics URLs of the node agents, of node only when not "".
func nodeAgentMetricsURLs(t *testing.T, node string) []string {
	t.Helper()
	opts := metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=vireo-nodeagent"}
	if node != "" {
		opts.FieldSelector = "spec.nodeName=" + node
	}
	pods, err := kube.CoreV1().Pods(v1.InstallNamespace).List(t.Context(), opts)
	if err != nil || len(pods.Items) == 0 {
		t.Fatalf("node agents (node %q): %d (%v)", node, len(pods.Items), err)
	}
	var urls []string
	for _, p := range pods.Items {
		urls = append(urls, "https://"+net.JoinHostPort(p.Status.PodIP, "8443")+"/metrics")
	}
	return urls
}

var downtimeSeries = regexp.MustCompile(`(?m)^vireo_vmi_migration_downtime_seconds_(count|sum) ([0-9.e+-]+)$`)

// arrivalDowntimes sums, over every node agent, the count and the sum of the downtimes of the
// migrations that arrived on its node (vireo_vmi_migration_downtime_seconds).
func arrivalDowntimes(t *testing.T, token string) (count, sum float64) {
	t.Helper()
	for _, url := range nodeAgentMetricsURLs(t, "") {
		var body string
		eventuallyWithin(t, "the node agent's metrics", 30*time.Second, func() error {
			var code int
			if code, body = scrape(t, url, token); code != 200 {
				return fmt.Errorf("GET %s: %d %.200s", url, code, body)
			}
			return nil
		})
		for _, m := range downtimeSeries.FindAllStringSubmatch(body, -1) {
			v, _ := strconv.ParseFloat(m[2], 64)
			if m[1] == "count" {
				count += v
			} else {
				sum += v
			}
		}
	}
	return count, sum
}
