package disks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// kubeletVolume lays files out in dir as the kubelet's atomic writer does: the data in a
// timestamped directory, "..data" linking to it, and each top-level name linking into "..data".
func kubeletVolume(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	const stamp = "..2026_12_04_10_00_00.000000001"
	top := map[string]bool{}
	for name, content := range files {
		p := filepath.Join(dir, stamp, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o440); err != nil {
			t.Fatal(err)
		}
		top[strings.SplitN(name, "/", 2)[0]] = true
	}
	if err := os.Symlink(stamp, filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	for name := range top {
		if err := os.Symlink(filepath.Join("..data", name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReadConfigVolume(t *testing.T) {
	dir := t.TempDir()
	want := map[string]string{"user": "admin", "password": "s3cret\n", "meta/app": "web", "meta/tier/level": "1"}
	kubeletVolume(t, dir, want)
	files, err := ReadConfigVolume(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for name, data := range files {
		got[name] = string(data)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
}

// TestReadConfigVolumeStaysBeneath: a link that leaves the volume (planted by whoever could
// write there) is refused, not followed.
func TestReadConfigVolumeStaysBeneath(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "host-secret")
	if err := os.WriteFile(outside, []byte("node data"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"absolute": outside, "relative": "../../" + filepath.Base(outside), "proc": "/proc/self/root/etc/hostname"} {
		dir := t.TempDir()
		kubeletVolume(t, dir, map[string]string{"ok": "fine"})
		if err := os.Symlink(target, filepath.Join(dir, "evil")); err != nil {
			t.Fatal(err)
		}
		files, err := ReadConfigVolume(dir)
		if err == nil || strings.Contains(string(files["evil"]), "node data") {
			t.Errorf("%s link: read %q, %v; want a refusal", name, files["evil"], err)
		}
	}
}

func TestReadConfigVolumeBounds(t *testing.T) {
	dir := t.TempDir()
	kubeletVolume(t, dir, map[string]string{"a": strings.Repeat("x", maxConfigVolumeBytes/2+1), "b": strings.Repeat("y", maxConfigVolumeBytes/2+1)})
	if _, err := ReadConfigVolume(dir); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("a volume over the size bound: %v, want a refusal", err)
	}
}

func TestConfigVolumeLabel(t *testing.T) {
	cases := []struct {
		src  v1.VolumeSource
		want string
	}{
		{v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "s"}}, "cfgdata"},
		{v1.VolumeSource{ServiceAccount: &v1.ServiceAccountVolumeSource{ServiceAccountName: "sa"}}, "cfgdata"},
		{v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{VolumeLabel: "OEMDRV"}}, "OEMDRV"},
		{v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{VolumeLabel: "facts"}}, "facts"},
	}
	for _, c := range cases {
		if got := configVolumeLabel(&v1.Volume{Name: "v", VolumeSource: c.src}); got != c.want {
			t.Errorf("label of %+v is %q, want %q", c.src, got, c.want)
		}
	}
}

// TestConfigVolumeISO: the disk is an ISO with the volume's label and every file at its
// path, nested paths included.
func TestConfigVolumeISO(t *testing.T) {
	needTools(t, "genisoimage", "isoinfo")
	mount := t.TempDir()
	kubeletVolume(t, mount, map[string]string{"user": "admin", "meta/app": "web"})
	p := &Preparer{Dir: t.TempDir()}
	src, err := p.ConfigVolume(testContext(t), "creds", mount, "secretlabel")
	if err != nil {
		t.Fatal(err)
	}
	if desc := isoinfo(t, src.Path, "-d"); !strings.Contains(desc, "Volume id: secretlabel") {
		t.Errorf("isoinfo -d lacks the label:\n%s", desc)
	}
	for name, content := range map[string]string{"/user": "admin", "/meta/app": "web"} {
		if got := isoinfo(t, src.Path, "-R", "-x", name); got != content {
			t.Errorf("%s on the ISO is %q, want %q", name, got, content)
		}
	}
}
