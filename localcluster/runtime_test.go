package localcluster

import (
	"strings"
	"testing"
)

func TestChooseNodeRuntime(t *testing.T) {
	fresh := Options{Layout: Layout{Root: t.TempDir()}}
	cases := []struct {
		name, recorded, want, got, err string
	}{
		{name: "a new installation defaults to kubelet", want: "", got: RuntimeKubelet},
		{name: "a new installation takes what is asked", want: RuntimeProcess, got: RuntimeProcess},
		{name: "an installation keeps its runtime", recorded: RuntimeKubelet, got: RuntimeKubelet},
		{name: "asking for the same runtime is fine", recorded: RuntimeKubelet, want: RuntimeKubelet, got: RuntimeKubelet},
		{name: "an installation cannot change its runtime", recorded: RuntimeKubelet, want: RuntimeProcess, err: "down --purge"},
		{name: "an installation from before runtimes runs processes", recorded: "none", want: RuntimeKubelet, err: "--node-runtime process"},
		{name: "an unknown runtime is refused", want: "docker", err: `"kubelet" and "process"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := fresh
			opts.Root = t.TempDir()
			if tc.recorded != "" {
				rec := opts
				rec.NodeRuntime = tc.recorded
				if tc.recorded == "none" {
					rec.NodeRuntime = ""
				}
				if err := New(rec).recordOptions(); err != nil {
					t.Fatal(err)
				}
			}
			err := ChooseNodeRuntime(&opts, tc.want)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil || opts.NodeRuntime != tc.got {
				t.Fatalf("runtime %q, err %v; want %q", opts.NodeRuntime, err, tc.got)
			}
		})
	}
}
