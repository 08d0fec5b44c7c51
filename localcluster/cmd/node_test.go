package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestShimBinary: nodes run containers through vireo-local-shim beside vireo-local and refuse
// to start, naming it, when it is missing or not executable.
func TestShimBinary(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "vireo-local")
	shim := filepath.Join(dir, shimName)
	if _, err := shimBinary(self); err == nil || !strings.Contains(err.Error(), shim) {
		t.Fatalf("missing shim: got %v, want an error naming %s", err, shim)
	}
	if err := os.WriteFile(shim, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := shimBinary(self); err == nil || !strings.Contains(err.Error(), "not executable") {
		t.Fatalf("shim without x bit: got %v, want an error", err)
	}
	if err := os.Chmod(shim, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := shimBinary(self); err != nil || got != shim {
		t.Fatalf("shimBinary = %q, %v; want %q", got, err, shim)
	}
}
