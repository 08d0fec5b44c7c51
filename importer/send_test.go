package importer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSend: the source side of a cross-namespace clone sends a raw disk to an upload import,
// which writes the same disk; a missing image fails permanently.
func TestSend(t *testing.T) {
	u := startUpload(t)
	image := filepath.Join(t.TempDir(), "disk.img")
	if err := os.WriteFile(image, rawContent(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Send(testContext(t), image, u.src.Socket); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if _, err := u.wait(t); err != nil {
		t.Fatalf("the import of what was sent: %v", err)
	}
	checkDisk(t, u.o, rawContent())

	err := Send(testContext(t), filepath.Join(t.TempDir(), "missing.img"), u.src.Socket)
	if err == nil || IsTransient(err) || !strings.Contains(err.Error(), "opening the image to send") {
		t.Errorf("sending a missing image: %v (transient %v), want a permanent failure", err, IsTransient(err))
	}
	link := filepath.Join(t.TempDir(), "link.img")
	if err := os.Symlink(image, link); err != nil {
		t.Fatal(err)
	}
	if err := Send(testContext(t), link, u.src.Socket); err == nil || IsTransient(err) {
		t.Errorf("sending through a symbolic link: %v, want a permanent refusal", err)
	}
}
