package pki

import (
	"bytes"
	"crypto/tls"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestKeysArePrivateAndNoTemporaryFilesRemain(t *testing.T) {
	dir := t.TempDir()
	ca, err := LoadOrCreateCA(dir, "ca", "test-ca")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ca.ClientCert("user", "alice", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := SigningKey(dir, "sa"); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		want := os.FileMode(0o644)
		if strings.HasSuffix(e.Name(), ".key") {
			want = 0o600
		}
		if info.Mode().Perm() != want {
			t.Errorf("%s has mode %v, want %v", e.Name(), info.Mode().Perm(), want)
		}
	}
	if got := strings.Join(names, " "); got != "ca.crt ca.key sa.key sa.pub user.crt user.key" {
		t.Errorf("files in the PKI directory: %s (a temporary file left behind?)", got)
	}
}

// TestKeyIsReplacedByRenameNotRewrittenInPlace shows the write is atomic: a hard link to
// the old key keeps the old content whole, so the old file was never truncated or
// rewritten, and the new content appeared under the name at once.
func TestKeyIsReplacedByRenameNotRewrittenInPlace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.key")
	if err := writeFileAtomic(path, []byte("old key"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "old-link")
	if err := os.Link(path, link); err != nil {
		t.Fatal(err)
	}
	if err := writeFileAtomic(path, []byte("new key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(link); string(b) != "old key" {
		t.Errorf("the old file was modified in place: %q", b)
	}
	if b, _ := os.ReadFile(path); string(b) != "new key" {
		t.Errorf("new content %q", b)
	}
	var oldSt, newSt syscall.Stat_t
	_ = syscall.Stat(link, &oldSt)
	_ = syscall.Stat(path, &newSt)
	if oldSt.Ino == newSt.Ino {
		t.Errorf("same inode after replacing: not a rename")
	}
}

func TestCertificateNotMatchingItsKeyIsReissued(t *testing.T) {
	dir := t.TempDir()
	ca, err := LoadOrCreateCA(dir, "ca", "test-ca")
	if err != nil {
		t.Fatal(err)
	}
	a, err := ca.ClientCert("a", "alice", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ca.ClientCert("b", "bob", nil)
	if err != nil {
		t.Fatal(err)
	}
	// As after a crash between writing a new key and its certificate: a's certificate
	// with another key.
	copyFile(t, b.KeyFile, a.KeyFile)
	if _, err := tls.LoadX509KeyPair(a.CertFile, a.KeyFile); err == nil {
		t.Fatal("test setup: the pair still matches")
	}
	if _, err := ca.ClientCert("a", "alice", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tls.LoadX509KeyPair(a.CertFile, a.KeyFile); err != nil {
		t.Errorf("not reissued: %v", err)
	}
	if leaf := loadLeaf(t, a); leaf.Subject.CommonName != "alice" {
		t.Errorf("reissued for %q, want alice", leaf.Subject.CommonName)
	}
}

func TestUnusableKeyIsReplaced(t *testing.T) {
	dir := t.TempDir()
	ca, err := LoadOrCreateCA(dir, "ca", "test-ca")
	if err != nil {
		t.Fatal(err)
	}
	a, err := ca.ClientCert("a", "alice", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(a.KeyFile, []byte("-----BEGIN EC PRI"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ca.ClientCert("a", "alice", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tls.LoadX509KeyPair(a.CertFile, a.KeyFile); err != nil {
		t.Errorf("truncated key not replaced: %v", err)
	}
}

func TestCANotMatchingItsKeyIsRecreatedAndItsCertificatesReissued(t *testing.T) {
	dir := t.TempDir()
	ca, err := LoadOrCreateCA(dir, "ca", "test-ca")
	if err != nil {
		t.Fatal(err)
	}
	other, err := LoadOrCreateCA(dir, "other", "other-ca")
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := ca.ClientCert("a", "alice", nil)
	if err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(dir, "other.key"), filepath.Join(dir, "ca.key"))
	again, err := LoadOrCreateCA(dir, "ca", "test-ca")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(again.PEM(), ca.PEM()) || bytes.Equal(again.PEM(), other.PEM()) {
		t.Fatal("the mismatched CA was kept")
	}
	if _, err := tls.LoadX509KeyPair(again.CertFile(), filepath.Join(dir, "ca.key")); err != nil {
		t.Fatalf("recreated CA: %v", err)
	}
	if _, err := again.ClientCert("a", "alice", nil); err != nil {
		t.Fatal(err)
	}
	if err := loadLeaf(t, leaf).CheckSignatureFrom(again.cert); err != nil {
		t.Errorf("certificate of the old CA not reissued: %v", err)
	}
}

func TestSigningKeyRewritesAStalePublicKey(t *testing.T) {
	dir := t.TempDir()
	sa, err := SigningKey(dir, "sa")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(sa.CertFile)
	keyBefore, _ := os.ReadFile(sa.KeyFile)
	if err := os.WriteFile(sa.CertFile, []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := SigningKey(dir, "sa"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(sa.CertFile)
	keyAfter, _ := os.ReadFile(sa.KeyFile)
	if !bytes.Equal(got, want) || !bytes.Equal(keyBefore, keyAfter) {
		t.Errorf("public key not rewritten from the unchanged private key")
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
