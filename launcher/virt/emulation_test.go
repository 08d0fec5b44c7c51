package virt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDetectEmulation(t *testing.T) {
	dir := t.TempDir()
	kvm := filepath.Join(dir, "kvm")
	if err := os.WriteFile(kvm, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cpuinfo := func(flags string) string {
		p := filepath.Join(dir, "cpuinfo-"+strings.ReplaceAll(flags, " ", "_"))
		content := "processor\t: 0\nflags\t\t: " + flags + "\n\nprocessor\t: 1\nflags\t\t: " + flags + "\n"
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name, kvm, cpuinfo string
		want               Emulation
		reason             string
	}{
		{"intel", kvm, cpuinfo("fpu vme vmx sse2"), EmulationKVM, "vmx"},
		{"amd", kvm, cpuinfo("fpu svm"), EmulationKVM, "svm"},
		{"pvm: kvm opens, no flag", kvm, cpuinfo("fpu hypervisor"), EmulationTCG, "neither vmx nor svm"},
		{"no /dev/kvm", filepath.Join(dir, "missing"), cpuinfo("vmx"), EmulationTCG, "cannot open"},
		{"no cpuinfo", kvm, filepath.Join(dir, "missing-cpuinfo"), EmulationTCG, "cannot read"},
		{"flag only as a substring", kvm, cpuinfo("vmxx svmfoo"), EmulationTCG, "neither"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, reason := detectEmulation(tc.kvm, tc.cpuinfo)
			if got != tc.want || !strings.Contains(reason, tc.reason) {
				t.Errorf("detectEmulation = %s, %q; want %s with %q", got, reason, tc.want, tc.reason)
			}
		})
	}
}

func TestDetectEmulationOnThisHost(t *testing.T) {
	e, reason := DetectEmulation()
	if reason == "" || (e != EmulationKVM && e != EmulationTCG) {
		t.Errorf("DetectEmulation = %q, %q", e, reason)
	}
	t.Logf("this host: %s (%s)", e, reason)
}
