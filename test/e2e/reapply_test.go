package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// examplesInOrder are the example manifests in the order they can be created: the migration
// needs its VMI.
var examplesInOrder = []struct{ file, resource, name string }{
	{"vmi-demo.yaml", "vmi", "testvmi"},
	{"vm-demo.yaml", "vm", "demo"},
	{"vmim-demo.yaml", "vmim", "migrate-testvmi"},
	{"dv-import.yaml", "dv", "tiny-guest-disk"},
}

// generation reads an object's metadata.generation with kubectl.
func generation(t *testing.T, ns, resource, name string) string {
	t.Helper()
	return kubectl(t, "-n", ns, "get", resource, name, "-o", "jsonpath={.metadata.generation}")
}

// TestReapplyingAnUnchangedManifestIsANoOp applies every example again and again, client-side
// and server-side in both orders, as KubeVirt users do: each apply succeeds without
// --force-conflicts and leaves the spec (its generation) as it was.
func TestReapplyingAnUnchangedManifestIsANoOp(t *testing.T) {
	t.Parallel()
	orders := map[string][][]string{
		"client-side first": {{"apply"}, {"apply"}, {"apply", "--server-side"}, {"apply", "--server-side"}, {"apply"}},
		"server-side first": {{"apply", "--server-side"}, {"apply", "--server-side"}, {"apply"}, {"apply"}, {"apply", "--server-side"}},
	}
	for orderName, applies := range orders {
		t.Run(orderName, func(t *testing.T) {
			ns := namespace(t)
			for _, ex := range examplesInOrder {
				file := filepath.Join(repo, "artifacts", "examples", ex.file)
				var first string
				for i, apply := range applies {
					args := append([]string{"-n", ns}, apply...)
					out, stderr, err := kubectlResult(append(args, "-f", file)...)
					if err != nil {
						t.Fatalf("%s: kubectl %s (apply %d of %d) failed: %v\n%s%s",
							ex.file, strings.Join(apply, " "), i+1, len(applies), err, out, stderr)
					}
					gen := generation(t, ns, ex.resource, ex.name)
					if i == 0 {
						first = gen
					} else if gen != first {
						t.Errorf("%s: generation %s after kubectl %s (apply %d), want %s: the unchanged manifest changed the spec",
							ex.file, gen, strings.Join(apply, " "), i+1, first)
					}
				}
			}
		})
	}
}

// TestDeprecatedRunningWithKubectl is a KubeVirt user's VM that still says `running`: applying it
// (client-side and server-side, twice each) warns as KubeVirt does and keeps `running` as written,
// and `kubectl patch --type merge` of running succeeds.
func TestDeprecatedRunningWithKubectl(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	manifest := manifestFile(t, `apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: legacy}
spec:
  running: false
  template:
    spec:
      domain: {memory: {guest: 64Mi}}
`)
	for i, apply := range [][]string{{"apply"}, {"apply"}, {"apply", "--server-side"}, {"apply", "--server-side"}} {
		out, stderr, err := kubectlResult(append(append([]string{"-n", ns}, apply...), "-f", manifest)...)
		if err != nil {
			t.Fatalf("kubectl %s (apply %d): %v\n%s%s", strings.Join(apply, " "), i+1, err, out, stderr)
		}
		// A second client-side apply of an unchanged manifest sends nothing, so hears no warning.
		if i == 1 {
			if !strings.Contains(out, "unchanged") {
				t.Errorf("second kubectl apply: %q, want unchanged", out)
			}
			continue
		}
		if !strings.Contains(stderr, "Warning: spec.running is deprecated, please use spec.runStrategy instead.") {
			t.Errorf("kubectl %s printed no deprecation warning; stderr:\n%s", strings.Join(apply, " "), stderr)
		}
	}
	if got := kubectl(t, "-n", ns, "get", "vm", "legacy", "-o", "jsonpath={.spec.running}/{.spec.runStrategy}"); got != "false/" {
		t.Errorf("running/runStrategy = %q, want \"false/\" (stored as written)", got)
	}
	kubectl(t, "-n", ns, "patch", "vm", "legacy", "--type", "merge", "-p", `{"spec":{"running":true}}`)
	if got := kubectl(t, "-n", ns, "get", "vm", "legacy", "-o", "jsonpath={.spec.running}"); got != "true" {
		t.Errorf("running after kubectl patch = %q, want true", got)
	}
}
