package images

import "testing"

func TestKernelDependency(t *testing.T) {
	cases := map[string]string{
		"linux-image-6.1.0-57-amd64 (= 6.1.192-3)":                           "linux-image-6.1.0-57-amd64",
		"firmware-linux-free, linux-image-6.12.9-amd64 (= 6.12.9-1) | foo":   "linux-image-6.12.9-amd64",
		"linux-image-6.1.0-57-amd64-unsigned (= 6.1.192-3), initramfs-tools": "linux-image-6.1.0-57-amd64-unsigned",
	}
	for in, want := range cases {
		if got, err := kernelDependency(in); err != nil || got != want {
			t.Errorf("kernelDependency(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := kernelDependency("initramfs-tools"); err == nil {
		t.Error("a Depends without a kernel was accepted")
	}
}
