package e2e

import (
	"bufio"
	"context"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestAPIResourcesListVireoKinds(t *testing.T) {
	t.Parallel()
	out := kubectl(t, "api-resources")
	for _, want := range []string{
		`virtualmachineinstances\s+vmi,vmis\s+kubevirt.io/v1\s+true\s+VirtualMachineInstance`,
		`virtualmachines\s+vm,vms\s+kubevirt.io/v1\s+true\s+VirtualMachine`,
		`virtualmachineinstancemigrations\s+vmim,vmims\s+kubevirt.io/v1\s+true\s+VirtualMachineInstanceMigration`,
		`datavolumes\s+dv,dvs\s+cdi.kubevirt.io/v1beta1\s+true\s+DataVolume`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("kubectl api-resources lacks /%s/:\n%s", want, out)
		}
	}
}

// TestExamplesThroughAggregation creates, reads, describes and deletes every example
// manifest with kubectl, through kube-apiserver's aggregation layer.
func TestExamplesThroughAggregation(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	cases := []struct {
		file, resource, name string
		header, wide         []string
	}{
		{"vmi-demo.yaml", "vmi", "testvmi", []string{"NAME", "AGE", "PHASE", "IP", "NODENAME", "READY"}, []string{"LIVE-MIGRATABLE", "PAUSED"}},
		{"vm-demo.yaml", "vm", "demo", []string{"NAME", "AGE", "STATUS", "READY"}, nil},
		{"vmim-demo.yaml", "vmim", "migrate-testvmi", []string{"NAME", "PHASE", "VMI"}, nil},
		{"dv-import.yaml", "dv", "tiny-guest-disk", []string{"NAME", "PHASE", "PROGRESS", "RESTARTS", "AGE"}, nil},
	}
	for _, c := range cases {
		kubectl(t, "-n", ns, "create", "-f", filepath.Join(repo, "artifacts", "examples", c.file))
		out := kubectl(t, "-n", ns, "get", c.resource, c.name)
		if got := strings.Fields(strings.SplitN(out, "\n", 2)[0]); strings.Join(got, " ") != strings.Join(c.header, " ") {
			t.Errorf("kubectl get %s header %v, want %v", c.resource, got, c.header)
		}
		if !strings.Contains(out, c.name) {
			t.Errorf("kubectl get %s lacks %s:\n%s", c.resource, c.name, out)
		}
		wide := strings.Fields(strings.SplitN(kubectl(t, "-n", ns, "get", c.resource, c.name, "-o", "wide"), "\n", 2)[0])
		if strings.Join(wide, " ") != strings.Join(append(c.header, c.wide...), " ") {
			t.Errorf("kubectl get %s -o wide header %v", c.resource, wide)
		}
		if d := kubectl(t, "-n", ns, "describe", c.resource, c.name); !strings.Contains(d, "Name:         "+c.name) {
			t.Errorf("kubectl describe %s:\n%s", c.resource, d)
		}
	}
	// The phase has moved on by now (vireo-controller schedules the VMI); the first one recorded
	// is the apiserver's Pending.
	out := kubectl(t, "-n", ns, "get", "vmi", "testvmi", "-o", "jsonpath={.spec.domain.machine.type} {.status.phaseTransitionTimestamps[0].phase}")
	if out != "q35 Pending" {
		t.Errorf("example vmi defaults through aggregation: %q, want \"q35 Pending\"", out)
	}
	if all := kubectl(t, "-n", ns, "get", "all"); !strings.Contains(all, "virtualmachineinstance.kubevirt.io/testvmi") ||
		!strings.Contains(all, "virtualmachine.kubevirt.io/demo") {
		t.Errorf("kubectl get all lacks the VMI and VM:\n%s", all)
	}
	// The VMI, deleted while its guest may still boot (before its acpid listens for the power
	// button), may take its grace period (30 s) to go, and longer on a machine busy with the
	// tests in parallel; a deletion slower than 60 s is logged with the namespace's state.
	for _, c := range cases {
		start := time.Now()
		kubectl(t, "-n", ns, "delete", c.resource, c.name, "--timeout=120s")
		if took := time.Since(start); took > time.Minute {
			t.Logf("kubectl delete %s %s took %s", c.resource, c.name, took.Round(100*time.Millisecond))
			diagnose(t, ns)
		}
		if _, _, err := kubectlResult("-n", ns, "get", c.resource, c.name); err == nil {
			t.Errorf("%s %s still exists after kubectl delete", c.resource, c.name)
		}
	}
}

func TestExplain(t *testing.T) {
	t.Parallel()
	out := kubectl(t, "explain", "vmi.spec.domain.devices.disks")
	for _, want := range []string{"KIND:       VirtualMachineInstance", "VERSION:    v1", "bootOrder", "<integer>", "DESCRIPTION:"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl explain vmi.spec.domain.devices.disks lacks %q:\n%s", want, out)
		}
	}
	if out := kubectl(t, "explain", "dv.spec.source.http.url"); !strings.Contains(out, "FIELD: url <string>") {
		t.Errorf("kubectl explain dv.spec.source.http.url:\n%s", out)
	}
}

func TestServerSideApplyConflict(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	vm := func(strategy string) string {
		return `apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: ssa}
spec:
  runStrategy: ` + strategy + `
  template:
    spec:
      domain: {memory: {guest: 64Mi}}
`
	}
	apply := func(manager, manifest string) (string, error) {
		cmd := exec.Command(filepath.Join(cluster.Options().BinDir, "kubectl"), "--kubeconfig", cluster.Options().Kubeconfig(),
			"-n", ns, "apply", "--server-side", "--field-manager", manager, "-f", "-")
		cmd.Stdin = strings.NewReader(manifest)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := apply("alice", vm("Always")); err != nil {
		t.Fatalf("apply as alice: %v\n%s", err, out)
	}
	if out, err := apply("alice", vm("Always")); err != nil {
		t.Fatalf("re-apply as alice: %v\n%s", err, out)
	}
	out, err := apply("bob", vm("Halted"))
	if err == nil || !strings.Contains(out, "conflict") || !strings.Contains(out, "alice") || !strings.Contains(out, ".spec.runStrategy") {
		t.Fatalf("apply as bob changing runStrategy: err %v, output %q; want a conflict with alice on .spec.runStrategy", err, out)
	}
}

func TestWatchSeesChangeWithinASecond(t *testing.T) {
	ns := namespace(t)
	kubectl(t, "-n", ns, "create", "-f", filepath.Join(repo, "artifacts", "examples", "vmi-demo.yaml"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(cluster.Options().BinDir, "kubectl"), "--kubeconfig", cluster.Options().Kubeconfig(),
		"-n", ns, "get", "vmi", "-w", "--output-watch-events", "-o", "custom-columns=EVENT:.type,NAME:.object.metadata.name,RV:.object.metadata.resourceVersion")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	lines := make(chan string, 16)
	go readLines(stdout, lines)
	// The initial listing shows the VMI; wait for it before changing anything.
	waitForLine(t, lines, "ADDED", 20*time.Second)

	// A patch, not get-then-update: vireo-controller and the node agent write the VMI's status
	// meanwhile, and an update from a stale read would conflict with them.
	updated, err := vireo.KubevirtV1().VirtualMachineInstances(ns).Patch(ctx, "testvmi", types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"changed":"yes"}}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// vireo-controller changes the VMI's status meanwhile (it schedules it): the update is the
	// MODIFIED event with its resourceVersion.
	deadline := time.After(time.Second)
	for {
		select {
		case l := <-lines:
			if f := strings.Fields(l); len(f) == 3 && f[0] == "MODIFIED" && f[2] == updated.ResourceVersion {
				return
			}
		case <-deadline:
			t.Fatalf("no MODIFIED event with the update's resourceVersion %s within a second", updated.ResourceVersion)
		}
	}
}

func readLines(r io.Reader, out chan<- string) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		out <- sc.Text()
	}
	close(out)
}

// waitForLine returns the first line containing want within timeout.
func waitForLine(t *testing.T, lines <-chan string, want string, timeout time.Duration) string {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("watch ended before a %s event", want)
			}
			if strings.Contains(l, want) {
				return l
			}
		case <-deadline:
			t.Fatalf("no %s event within %s", want, timeout)
		}
	}
}
