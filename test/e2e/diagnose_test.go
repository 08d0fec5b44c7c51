package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// diagnose logs what a failed test's namespace holds, for a failure seen only in CI, where
// nothing of the installation is kept: its VMIs, VMs, migrations, DataVolumes and Pods with
// their phases, the Pods' containers, the namespace's events, the lines of vireo-controller's
// and the node agents' logs that name it, and the last lines of each launcher's log.
func diagnose(t *testing.T, ns string) {
	t.Helper()
	var b strings.Builder
	// Bounded: a failure may have left an API server that does not answer.
	bounded := func(args ...string) (string, string, error) {
		return kubectlResult(append([]string{"--request-timeout=20s"}, args...)...)
	}
	section := func(title string, args ...string) {
		out, errOut, err := bounded(args...)
		if err != nil {
			out += fmt.Sprintf("(%v: %s)", err, strings.TrimSpace(errOut))
		}
		fmt.Fprintf(&b, "--- %s\n%s\n", title, strings.TrimSpace(out))
	}
	section("objects", "-n", ns, "get", "vmi,vm,vmim,dv,pvc,pods", "-o", "wide")
	section("VMI phases and conditions", "-n", ns, "get", "vmi", "-o",
		`jsonpath={range .items[*]}{.metadata.name} {.status.phase} deleting={.metadata.deletionTimestamp} finalizers={.metadata.finalizers} {.status.conditions}{"\n"}{end}`)
	section("Pods' containers", "-n", ns, "get", "pods", "-o",
		`jsonpath={range .items[*]}{.metadata.name} {.status.phase} deleting={.metadata.deletionTimestamp} node={.spec.nodeName} {.status.containerStatuses[*].state}{"\n"}{end}`)
	section("events", "-n", ns, "get", "events", "--sort-by=.lastTimestamp")
	for _, component := range []string{"vireo-controller", "vireo-nodeagent"} {
		out, _, err := bounded("-n", "vireo-system", "logs", "-l", "app.kubernetes.io/name="+component, "--tail=-1", "--prefix", "--max-log-requests=10")
		if err != nil {
			continue
		}
		fmt.Fprintf(&b, "--- %s's lines naming %s\n%s\n", component, ns, strings.Join(lastMatching(out, ns+"/", 40), "\n"))
	}
	pods, _, _ := bounded("-n", ns, "get", "pods", "-o", "name")
	for _, pod := range strings.Fields(pods) {
		section(pod+" (last lines)", "-n", ns, "logs", pod, "--all-containers", "--tail=15")
	}
	t.Logf("namespace %s at the failure:\n%s", ns, b.String())
}

// lastMatching is the last n lines of text that contain s.
func lastMatching(text, s string, n int) []string {
	var lines []string
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, s) {
			lines = append(lines, line)
		}
	}
	return lines[max(0, len(lines)-n):]
}
