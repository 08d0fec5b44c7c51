package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// TestVMIWithWhatVireoCannotRunFailsWithAReason: a KubeVirt manifest that asks for a TPM is
// accepted (KubeVirt accepts it), then fails with reason Unsupported naming the field, instead of
// running without it.
func TestVMIWithWhatVireoCannotRunFailsWithAReason(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	manifest := manifestFile(t, `apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: tpm}
spec:
  domain:
    memory: {guest: 64Mi}
    devices: {tpm: {}}
`)
	kubectl(t, "-n", ns, "apply", "-f", manifest)
	var got string
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		got = kubectl(t, "-n", ns, "get", "vmi", "tpm", "-o", `jsonpath={.status.phase}/{.status.reason}/{.status.conditions[?(@.type=="Synchronized")].message}`)
		return strings.HasPrefix(got, "Failed/"), nil
	})
	if err != nil || !strings.HasPrefix(got, "Failed/Unsupported/") || !strings.Contains(got, "spec.domain.devices.tpm") {
		t.Fatalf("vmi status %q (err %v), want Failed/Unsupported naming spec.domain.devices.tpm", got, err)
	}
}
