package kvm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNodeUsable: KVM is usable only when the kvm module's sysfs directory exists and the CPU
// advertises vmx or svm; each refusal says which of the two is missing.
func TestNodeUsable(t *testing.T) {
	dir := t.TempDir()
	sysfs := filepath.Join(dir, "kvm")
	cpuinfo := func(flags string) string {
		f := filepath.Join(dir, "cpuinfo-"+strings.ReplaceAll(flags, " ", "_"))
		if err := os.WriteFile(f, []byte("processor\t: 0\nflags\t\t: "+flags+"\n\nprocessor\t: 1\nflags\t\t: "+flags+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	if ok, reason := NodeUsable(sysfs, cpuinfo("fpu svm")); ok || !strings.Contains(reason, "kvm module is not loaded") {
		t.Errorf("no sysfs directory: %t, %q", ok, reason)
	}
	if err := os.Mkdir(sysfs, 0o755); err != nil {
		t.Fatal(err)
	}
	if ok, reason := NodeUsable(sysfs, cpuinfo("fpu sse4_2")); ok || !strings.Contains(reason, "neither vmx nor svm") {
		t.Errorf("no vmx or svm: %t, %q", ok, reason)
	}
	if ok, reason := NodeUsable(sysfs, filepath.Join(dir, "missing")); ok || !strings.Contains(reason, "cannot read") {
		t.Errorf("no cpuinfo: %t, %q", ok, reason)
	}
	for _, flag := range []string{"vmx", "svm"} {
		if ok, reason := NodeUsable(sysfs, cpuinfo("fpu "+flag+" sse2")); !ok || !strings.Contains(reason, flag) {
			t.Errorf("%s: %t, %q", flag, ok, reason)
		}
	}
}
