package localcluster

import (
	"os"
	"strings"
	"testing"
)

// TestCheckNodeRuntime: a new installation and one of kubelet nodes go on; one recorded before
// the local nodes were kubelets (no nodeRuntime) is refused with the way out.
func TestCheckNodeRuntime(t *testing.T) {
	for _, c := range []struct {
		name, recorded, err string
	}{
		{name: "a new installation"},
		{name: "kubelet nodes", recorded: `{"registry":"10.250.0.1:5000","nodeRuntime":"kubelet"}`},
		{name: "vireo-local's own node", recorded: `{"registry":"10.250.0.1:5000"}`, err: "down --purge"},
		{name: "an unreadable record", recorded: `{`, err: "installation.json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := Options{Layout: Layout{Root: t.TempDir()}}
			if c.recorded != "" {
				if err := os.MkdirAll(opts.Run(), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(opts.recordedFile(), []byte(c.recorded), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := New(opts).checkNodeRuntime()
			if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
				t.Errorf("checkNodeRuntime() = %v, want an error containing %q", err, c.err)
			}
		})
	}
}
