package disks

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/launcher/protocol"
)

// kubeletSecretDir lays out a Secret's files as a kubelet's atomic writer does: each key a
// symlink to ..data/key, ..data a symlink to a timestamped directory.
func kubeletSecretDir(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	ts := filepath.Join(dir, "..2026_11_30_00_00_00.1")
	if err := os.MkdirAll(ts, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Base(ts), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	for k, v := range files {
		if err := os.WriteFile(filepath.Join(ts, k), []byte(v), 0o440); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join("..data", k), filepath.Join(dir, k)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReadMountedSecret(t *testing.T) {
	root := t.TempDir()
	outside := filepath.Join(root, "outside")
	if err := os.WriteFile(outside, []byte("host secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	kubelet := filepath.Join(root, "kubelet")
	kubeletSecretDir(t, kubelet, map[string]string{"userData": "#!/bin/sh\necho camel\n"})
	plain := filepath.Join(root, "plain")
	if err := os.MkdirAll(plain, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(plain, "userdata"), []byte("lower"), 0o440); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(plain, "userData"), []byte("camel"), 0o440); err != nil {
		t.Fatal(err)
	}
	escape := filepath.Join(root, "escape")
	if err := os.MkdirAll(escape, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(escape, "userdata")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside", filepath.Join(escape, "userData")); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(root, "big")
	if err := os.MkdirAll(big, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(big, "userdata"), make([]byte, protocol.MaxSecretFileBytes+1), 0o440); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name, dir, want, wantKey, wantErr string
	}{
		{name: "kubelet layout, second key", dir: kubelet, want: "#!/bin/sh\necho camel\n", wantKey: "userData"},
		{name: "first key wins", dir: plain, want: "lower", wantKey: "userdata"},
		{name: "absolute symlink out of the volume", dir: escape, wantErr: "userdata"},
		{name: "too large", dir: big, wantErr: "more than the 1048576"},
		{name: "no such key", dir: filepath.Join(root, "kubelet"), wantErr: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keys := userDataKeys
			if tc.name == "no such key" {
				keys = networkDataKeys
			}
			data, key, err := ReadMountedSecret(tc.dir, keys...)
			switch {
			case tc.name == "no such key":
				if !errors.Is(err, errNoKey) {
					t.Errorf("err = %v, want errNoKey", err)
				}
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("err = %v, want one containing %q (data %q)", err, tc.wantErr, data)
				}
			case err != nil:
				t.Fatal(err)
			case string(data) != tc.want || key != tc.wantKey:
				t.Errorf("got %q from key %q, want %q from %q", data, key, tc.want, tc.wantKey)
			}
		})
	}
}

func TestCloudInitSecretsFromMounts(t *testing.T) {
	dir := t.TempDir()
	kubeletSecretDir(t, filepath.Join(dir, "ci", protocol.UserDataSecret), map[string]string{"userdata": "#!/bin/sh\necho from-secret\n"})
	kubeletSecretDir(t, filepath.Join(dir, "ci", protocol.NetworkDataSecret), map[string]string{"networkData": "version: 2\n"})
	vol := v1.Volume{Name: "ci", VolumeSource: v1.VolumeSource{CloudInitNoCloud: &v1.CloudInitNoCloudSource{
		UserDataSecretRef: &v1.LocalObjectReference{Name: "ud"}, NetworkDataSecretRef: &v1.LocalObjectReference{Name: "nd"}}}}
	got, err := NodeVolumes{SecretsDir: dir}.cloudInitSecrets(&vol)
	if err != nil {
		t.Fatal(err)
	}
	vmi := &v1.VirtualMachineInstance{}
	vmi.Name, vmi.Namespace, vmi.UID = "vm", "ns", "3c2b8d4f-1111-4222-8333-944455556666"
	nc, err := NoCloudFromVolume(vmi, &vol, got)
	if err != nil {
		t.Fatal(err)
	}
	if string(nc.UserData) != "#!/bin/sh\necho from-secret\n" || string(nc.NetworkConfig) != "version: 2\n" {
		t.Errorf("user-data %q, network-config %q", nc.UserData, nc.NetworkConfig)
	}

	// A Secret without the key: the error names the Secret and the keys.
	vol.CloudInitNoCloud.NetworkDataSecretRef = nil
	vol.CloudInitNoCloud.UserDataSecretRef.Name = "wrong-keys"
	if err := os.RemoveAll(filepath.Join(dir, "ci", protocol.UserDataSecret)); err != nil {
		t.Fatal(err)
	}
	kubeletSecretDir(t, filepath.Join(dir, "ci", protocol.UserDataSecret), map[string]string{"user-data": "x"})
	_, err = NodeVolumes{SecretsDir: dir}.cloudInitSecrets(&vol)
	if err == nil || !strings.Contains(err.Error(), `Secret "wrong-keys"`) || !strings.Contains(err.Error(), "userdata or userData") {
		t.Errorf("err = %v, want one naming the Secret and its keys", err)
	}
}
