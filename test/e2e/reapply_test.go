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
