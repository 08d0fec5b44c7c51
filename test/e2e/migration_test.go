package e2e

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// tickLoop makes the guest print "T <counter> <uptime>" every 100 ms on its console and keep
// the lines in /tmp/ticks, so a test can check after a migration that the counter never reset
// and never paused for long (the guest's own clock stops while QEMU is paused, so gaps in it are
// the guest's hiccups, not the switch-over's downtime, which libvirt measures).
const tickLoop = `(i=0; while :; do i=$((i+1)); echo "T $i $(cut -d' ' -f1 /proc/uptime)" | tee -a /tmp/ticks > /dev/ttyS0; usleep 100000; done) &`

// tickCheck prints GAP for every pair of consecutive ticks whose counter does not follow or
// whose uptimes are more than 1 s apart, then CHECKED and the number of ticks.
const tickCheck = `awk 'NR>1 && ($2!=p+1 || $3<u || $3-u>1.0) {print "GAP", p, $2, u, $3} {p=$2; u=$3} END {print "CHECKED", NR}' /tmp/ticks`

var tickRE = regexp.MustCompile(`T (\d+) ([0-9.]+)`)

// lastTick is the highest counter the console printed (0: none).
func lastTick(out string) int {
	last := 0
	for _, m := range tickRE.FindAllStringSubmatch(out, -1) {
		if n, err := strconv.Atoi(m[1]); err == nil && n > last {
			last = n
		}
	}
	return last
}

// startMigration creates a migration of VMI name, to its own node when inPlace.
func startMigration(t *testing.T, ns, name, node string) *v1.VirtualMachineInstanceMigration {
	t.Helper()
	m := &v1.VirtualMachineInstanceMigration{ObjectMeta: metav1.ObjectMeta{GenerateName: name + "-"},
		Spec: v1.VirtualMachineInstanceMigrationSpec{VMIName: name}}
	if node != "" {
		m.Spec.AddedNodeSelector = map[string]string{"kubernetes.io/hostname": node}
	}
	created, err := vireo.KubevirtV1().VirtualMachineInstanceMigrations(ns).Create(t.Context(), m, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating the migration: %v", err)
	}
	return created
}

// migrateWithVireoctl migrates VMI name, which no VM owns, with `vireoctl migrate` (to node
// when given) and returns the migration it created.
func migrateWithVireoctl(t *testing.T, ns, name, node string) *v1.VirtualMachineInstanceMigration {
	t.Helper()
	args := []string{"-n", ns, "migrate", name}
	if node != "" {
		args = append(args, "--node", node)
	}
	if out, err := vireoctl(t, args...); err != nil || !strings.Contains(out, "VMI "+name+" was scheduled to migrate") {
		t.Fatalf("vireoctl %v: %v\n%s", args, err, out)
	}
	l, err := vireo.KubevirtV1().VirtualMachineInstanceMigrations(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil || len(l.Items) != 1 || l.Items[0].Spec.VMIName != name {
		t.Fatalf("after vireoctl migrate %s: migrations %+v (%v), want one of %s", name, l, err, name)
	}
	return &l.Items[0]
}

// waitMigration waits until the migration reached phase (or ended otherwise: then it fails).
func waitMigration(t *testing.T, ns, name string, phase v1.VirtualMachineInstanceMigrationPhase, timeout time.Duration) *v1.VirtualMachineInstanceMigration {
	t.Helper()
	var m *v1.VirtualMachineInstanceMigration
	eventuallyWithin(t, "migration "+name+" "+string(phase), timeout, func() error {
		var err error
		if m, err = vireo.KubevirtV1().VirtualMachineInstanceMigrations(ns).Get(t.Context(), name, metav1.GetOptions{}); err != nil {
			return err
		}
		if m.Status.Phase == phase {
			return nil
		}
		if m.Status.Phase == v1.MigrationSucceeded || m.Status.Phase == v1.MigrationFailed {
			t.Fatalf("migration %s ended %s, want %s: %+v", name, m.Status.Phase, phase, m.Status.MigrationState)
		}
		return fmt.Errorf("phase %q", m.Status.Phase)
	})
	return m
}

// TestLiveMigrationInPlace: a guest printing a counter every 100 ms moves to a new launcher on
// its own node (Vireo's; KubeVirt only moves between nodes), with the checks of
// migrateTickingGuest.
func TestLiveMigrationInPlace(t *testing.T) {
	migrateTickingGuest(t, true)
}

// TestLiveMigrationBetweenNodes: the same guest moves to the other node, its state streamed
// between the node agents over mutual TLS.
func TestLiveMigrationBetweenNodes(t *testing.T) {
	migrateTickingGuest(t, false)
}

// migrateTickingGuest migrates a guest printing a counter every 100 ms, in place or to another
// node, and checks: the migration passes KubeVirt's phases, the VMI then runs in the target Pod
// on the target node (the source Pod gone), the counter went on without a reset or a gap in the
// guest, the guest's uptime kept growing, and its web server answers at the new Pod's address.
func migrateTickingGuest(t *testing.T, inPlace bool) {
	ns := namespace(t)
	applyExample(t, ns, "vmi-tiny.yaml")
	vmi := waitPhase(t, ns, "tiny", v1.Running, 2*time.Minute)
	source := vmi.Status.NodeName
	var sourceUID types.UID
	for uid := range vmi.Status.ActivePods {
		sourceUID = uid
	}
	con := openConsoleIn(t, podDir(source, sourceUID))
	con.waitFor(t, guestMarker, 90*time.Second)
	con.send(t, tickLoop)
	con.waitFor(t, "T 20 ", 30*time.Second)

	token := serviceAccountToken(t, ns, "scraper")
	bindMetricsReader(t, ns, "scraper")
	arrived, downtimes := arrivalDowntimes(t, token)

	want := source
	if !inPlace {
		want = ""
	}
	m := migrateWithVireoctl(t, ns, "tiny", want)
	m = waitMigration(t, ns, m.Name, v1.MigrationSucceeded, 3*time.Minute)
	before := lastTick(con.output())
	var phases []string
	for _, p := range m.Status.PhaseTransitionTimestamps {
		phases = append(phases, string(p.Phase))
	}
	if want := "Scheduling Scheduled PreparingTarget TargetReady Running Succeeded"; !strings.HasSuffix(strings.Join(phases, " "), want) {
		t.Errorf("phase transitions %v, want ... %s", phases, want)
	}
	ms := m.Status.MigrationState
	if ms == nil || !ms.Completed || ms.Failed || ms.SourceNode != source || ms.StartTimestamp == nil || ms.EndTimestamp == nil ||
		(ms.TargetNode == source) != inPlace {
		t.Fatalf("the migration's state (in place: %v): %+v", inPlace, ms)
	}
	target := ms.TargetNode

	vmi = waitVMI(t, ns, "tiny", time.Minute, "running in the target Pod alone", func(v *v1.VirtualMachineInstance) bool {
		return v.Status.Phase == v1.Running && len(v.Status.ActivePods) == 1 && v.Status.MigrationState != nil &&
			v.Status.MigrationState.TargetNodeDomainDetected
	})
	var pod *corev1.Pod
	eventuallyWithin(t, "the source Pod is gone", time.Minute, func() error {
		pods, err := kube.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: v1.CreatedByLabel + "=" + string(vmi.UID)})
		if err != nil {
			return err
		}
		if len(pods.Items) != 1 || pods.Items[0].Name != ms.TargetPod {
			return fmt.Errorf("%d launcher Pods", len(pods.Items))
		}
		pod = &pods.Items[0]
		return nil
	})
	if vmi.Status.NodeName != target || pod.Spec.NodeName != target || pod.UID == sourceUID {
		t.Errorf("after the migration: VMI on %s, target Pod %s on %s, want %s", vmi.Status.NodeName, pod.Name, pod.Spec.NodeName, target)
	}
	if _, err := kube.CoreV1().Pods(ns).Get(t.Context(), ms.SourcePod, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("source Pod %s: %v, want NotFound", ms.SourcePod, err)
	}

	// The guest went on: its counter continues, and its log of ticks has no reset or gap.
	moved := openConsoleIn(t, podDir(target, pod.UID))
	eventuallyWithin(t, "the counter goes on after the migration", 30*time.Second, func() error {
		if n := lastTick(moved.output()); n <= before {
			return fmt.Errorf("last tick %d, before the migration %d", n, before)
		}
		return nil
	})
	moved.send(t, tickCheck)
	moved.waitFor(t, "CHECKED", 20*time.Second)
	if out := moved.output(); strings.Contains(out, "GAP ") {
		t.Errorf("the guest's ticks reset or paused:\n%s", out[strings.Index(out, "GAP "):])
	}
	checkDowntime(t, token, arrived, downtimes)
	// vireo-controller moves the VMI to the target Pod; the target's node agent then reports
	// the interfaces as the target launcher has them, with its next status write.
	waitVMI(t, ns, "tiny", 30*time.Second, "showing the target Pod's address "+pod.Status.PodIP, func(v *v1.VirtualMachineInstance) bool {
		return len(v.Status.Interfaces) == 1 && v.Status.Interfaces[0].IP == pod.Status.PodIP
	})
	if body := httpGet(t, "http://"+pod.Status.PodIP+"/"); !strings.Contains(body, "vireo-tiny-guest") {
		t.Errorf("the guest's web server answered %q at the new address", body)
	}
	vnc, _, err := dialStream(t, admin, streamPath("subresources.kubevirt.io", ns, "tiny", "vnc"))
	if err != nil {
		t.Fatalf("VNC after the migration: %v", err)
	}
	vnc.waitFor(t, "RFB 003.008\n", 30*time.Second)
	checkAgentAfterMigration(t, ns, "tiny")
}

// checkAgentAfterMigration: the target launcher talks to the guest's qemu-ga (the guestosinfo
// subresource answers through the target's node agent) and the VMI says AgentConnected.
func checkAgentAfterMigration(t *testing.T, ns, name string) {
	t.Helper()
	eventuallyWithin(t, "guestosinfo answers from the target", 60*time.Second, func() error {
		code, raw := guestInfo(t, vireo, ns, name, "guestosinfo")
		var info v1.VirtualMachineInstanceGuestAgentInfo
		if code != 200 {
			return fmt.Errorf("guestosinfo: %d %s", code, raw)
		}
		if err := json.Unmarshal(raw, &info); err != nil || info.OS.ID != "vireo-tiny" {
			return fmt.Errorf("guestosinfo %s: os %+v (%v), want vireo-tiny", raw, info.OS, err)
		}
		return nil
	})
	waitVMI(t, ns, name, 30*time.Second, "AgentConnected True after the migration", func(v *v1.VirtualMachineInstance) bool {
		c := conditionOf(v, v1.VirtualMachineInstanceAgentConnected)
		return c != nil && c.Status == v1.ConditionTrue
	})
}

// checkDowntime waits until the node agents count one more arrival than arrived and checks
// its pause: the guest's clock stops with it, so the pause at the switch-over is libvirt's
// figure, as the target's node agent reports it (more than 0, at most 1 s).
func checkDowntime(t *testing.T, token string, arrived, downtimes float64) {
	t.Helper()
	eventuallyWithin(t, "the target's node agent counts the arrival", 30*time.Second, func() error {
		n, sum := arrivalDowntimes(t, token)
		if n != arrived+1 {
			return fmt.Errorf("%v arrivals, want %v", n, arrived+1)
		}
		downtime := time.Duration((sum - downtimes) * float64(time.Second))
		t.Logf("the guest was paused %s at the switch-over", downtime)
		if downtime <= 0 || downtime > time.Second {
			t.Errorf("downtime %s, want more than 0 and at most 1 s", downtime)
		}
		return nil
	})
}
