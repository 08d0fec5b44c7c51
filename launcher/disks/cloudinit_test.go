package disks

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/launcher/domain"
)

func TestNoCloudFromVolume(t *testing.T) {
	vmi := &v1.VirtualMachineInstance{}
	vmi.Name, vmi.Namespace, vmi.UID = "fedora", "default", "2b1a7c3e-1111-4222-8333-944455556666"
	uuid, err := domain.FirmwareUUID(vmi)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		src     *v1.CloudInitNoCloudSource
		secrets ResolvedSecrets
		want    NoCloud
		err     string
	}{
		{"userData and networkData", &v1.CloudInitNoCloudSource{UserData: "#cloud-config\n", NetworkData: "version: 2\n"}, ResolvedSecrets{},
			NoCloud{UserData: []byte("#cloud-config\n"), NetworkConfig: []byte("version: 2\n"), InstanceID: "fedora.default", LocalHostname: "fedora"}, ""},
		{"userDataBase64", &v1.CloudInitNoCloudSource{UserDataBase64: "I2Nsb3VkLWNvbmZpZwo="}, ResolvedSecrets{},
			NoCloud{UserData: []byte("#cloud-config\n"), NetworkConfig: []byte{}, InstanceID: "fedora.default", LocalHostname: "fedora"}, ""},
		{"secretRef", &v1.CloudInitNoCloudSource{UserDataSecretRef: &v1.LocalObjectReference{Name: "s"}},
			ResolvedSecrets{UserData: []byte("#!/bin/sh\n"), NetworkData: []byte("version: 1\n")},
			NoCloud{UserData: []byte("#!/bin/sh\n"), NetworkConfig: []byte("version: 1\n"), InstanceID: "fedora.default", LocalHostname: "fedora"}, ""},
		{"bad base64", &v1.CloudInitNoCloudSource{UserDataBase64: "%%%"}, ResolvedSecrets{}, NoCloud{}, "not valid base64"},
		{"unresolved secret", &v1.CloudInitNoCloudSource{UserDataSecretRef: &v1.LocalObjectReference{Name: "s"}}, ResolvedSecrets{}, NoCloud{}, `Secret "s"`},
		{"two user-data sources", &v1.CloudInitNoCloudSource{UserData: "a", UserDataBase64: "YQ=="}, ResolvedSecrets{}, NoCloud{}, "only one"},
		{"network data twice", &v1.CloudInitNoCloudSource{NetworkData: "a"}, ResolvedSecrets{NetworkData: []byte("b")}, NoCloud{}, "network data given more than once"},
		{"networkDataBase64", &v1.CloudInitNoCloudSource{NetworkDataBase64: "dmVyc2lvbjogMgo="}, ResolvedSecrets{},
			NoCloud{NetworkConfig: []byte("version: 2\n"), InstanceID: "fedora.default", LocalHostname: "fedora"}, ""},
		{"networkDataBase64 not base64", &v1.CloudInitNoCloudSource{NetworkDataBase64: "%%%"}, ResolvedSecrets{}, NoCloud{}, "cloudInitNoCloud.networkDataBase64 is not valid base64"},
		{"not cloud-init", nil, ResolvedSecrets{}, NoCloud{}, "not a cloud-init volume"},
	}
	for _, c := range cases {
		vol := &v1.Volume{Name: "cloudinit", VolumeSource: v1.VolumeSource{CloudInitNoCloud: c.src}}
		got, err := NoCloudFromVolume(vmi, vol, c.secrets)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		c.want.UUID = uuid
		if diff := cmp.Diff(c.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
	vmi.Spec.Hostname = "web"
	drive := &v1.Volume{Name: "cloudinit", VolumeSource: v1.VolumeSource{CloudInitConfigDrive: &v1.CloudInitConfigDriveSource{
		UserData: "x", NetworkDataBase64: "%%%"}}}
	if _, err := NoCloudFromVolume(vmi, drive, ResolvedSecrets{}); err == nil || !strings.Contains(err.Error(), "cloudInitConfigDrive.networkDataBase64") {
		t.Errorf("a config drive's bad base64: %v, want its field named", err)
	}
	drive.CloudInitConfigDrive.NetworkDataBase64 = ""
	got, err := NoCloudFromVolume(vmi, drive, ResolvedSecrets{})
	if err != nil || got.LocalHostname != "web" || string(got.UserData) != "x" {
		t.Errorf("config drive: %+v, %v; want its user-data and spec.hostname", got, err)
	}
}

func TestMetaData(t *testing.T) {
	got := string(NoCloud{InstanceID: "fedora.default", LocalHostname: "fedora"}.metaData())
	if want := "instance-id: fedora.default\nlocal-hostname: fedora\n"; got != want {
		t.Errorf("meta-data %q, want %q", got, want)
	}
	got = string(NoCloud{InstanceID: "a: b\nc", LocalHostname: "h"}.metaData())
	if want := "instance-id: \"a: b\\nc\"\nlocal-hostname: h\n"; got != want {
		t.Errorf("meta-data %q, want %q", got, want)
	}
}

// needTools skips a test under -short or when a tool it runs is missing.
func needTools(t *testing.T, tools ...string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs qemu-img or genisoimage; skipped with -short")
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (hack/install-deps.sh installs it)", tool)
		}
	}
}

// testContext is a context with a deadline for the tools a test runs.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// isoinfo runs isoinfo on iso with args.
func isoinfo(t *testing.T, iso string, args ...string) string {
	t.Helper()
	out, err := exec.Command("isoinfo", append([]string{"-i", iso}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("isoinfo %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func TestCloudInitNoCloudISO(t *testing.T) {
	needTools(t, "genisoimage", "isoinfo")
	p := &Preparer{Dir: t.TempDir()}
	data := NoCloud{
		UserData:      []byte("#cloud-config\npassword: fedora\n"),
		NetworkConfig: []byte("version: 2\nethernets: {}\n"),
		InstanceID:    "fedora.default", LocalHostname: "fedora",
	}
	src, err := p.CloudInitNoCloud(testContext(t), "cloudinitdisk", data)
	if err != nil {
		t.Fatal(err)
	}
	want := domain.DiskSource{Path: filepath.Join(p.Dir, "cloud-init", "cloudinitdisk.iso"), Format: domain.FormatRaw, DirectIO: src.DirectIO}
	if diff := cmp.Diff(want, src); diff != "" {
		t.Errorf("DiskSource (-want +got):\n%s", diff)
	}
	desc := isoinfo(t, src.Path, "-d")
	for _, w := range []string{"Volume id: cidata", "Joliet", "Rock Ridge"} {
		if !strings.Contains(desc, w) {
			t.Errorf("isoinfo -d lacks %q:\n%s", w, desc)
		}
	}
	for _, mode := range []string{"-R", "-J"} {
		listing := isoinfo(t, src.Path, mode, "-l")
		for _, name := range []string{"user-data", "meta-data", "network-config"} {
			if !strings.Contains(listing, " "+name) {
				t.Errorf("isoinfo %s -l lacks %s:\n%s", mode, name, listing)
			}
		}
	}
	for name, content := range map[string][]byte{"user-data": data.UserData, "meta-data": data.metaData(), "network-config": data.NetworkConfig} {
		if got := isoinfo(t, src.Path, "-R", "-x", "/"+name); got != string(content) {
			t.Errorf("%s on the ISO is %q, want %q", name, got, content)
		}
	}
	if _, err := exec.LookPath("blkid"); err == nil {
		out, err := exec.Command("blkid", "-p", "-o", "export", src.Path).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "LABEL=cidata") || !strings.Contains(string(out), "TYPE=iso9660") {
			t.Errorf("blkid: %v\n%s", err, out)
		}
	}
	entries, err := os.ReadDir(filepath.Join(p.Dir, "cloud-init"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("cloud-init directory holds %v; the staged data should be gone", entries)
	}

	// Again without network data: the ISO is rewritten and has no network-config.
	data.NetworkConfig = nil
	if _, err := p.CloudInitNoCloud(testContext(t), "cloudinitdisk", data); err != nil {
		t.Fatal(err)
	}
	if listing := isoinfo(t, src.Path, "-R", "-l"); strings.Contains(listing, "network-config") {
		t.Errorf("network-config without network data:\n%s", listing)
	}
}

func TestCloudInitNoCloudRefusesBadNames(t *testing.T) {
	p := &Preparer{Dir: t.TempDir()}
	if _, err := p.CloudInitNoCloud(context.Background(), "../x", NoCloud{InstanceID: "i"}); err == nil {
		t.Error("a volume name with a path was accepted")
	}
	if _, err := p.CloudInitNoCloud(context.Background(), "ok", NoCloud{}); err == nil {
		t.Error("meta-data without an instance-id was accepted")
	}
}

// TestCloudInitConfigDriveISO: a config drive is an ISO labelled config-2 with OpenStack's
// openstack/latest/ files: user_data, meta_data.json (KubeVirt's instance_id, hostname and
// uuid) and network_data.json when there is network data.
func TestCloudInitConfigDriveISO(t *testing.T) {
	needTools(t, "genisoimage", "isoinfo")
	p := &Preparer{Dir: t.TempDir()}
	data := NoCloud{UserData: []byte("#cloud-config\n"), NetworkConfig: []byte(`{"links":[]}`),
		InstanceID: "fedora.default", LocalHostname: "fedora", UUID: "5d1c2a3b-1111-5222-8333-944455556666"}
	src, err := p.CloudInitConfigDrive(testContext(t), "configdrive", data)
	if err != nil {
		t.Fatal(err)
	}
	if desc := isoinfo(t, src.Path, "-d"); !strings.Contains(desc, "Volume id: config-2") {
		t.Errorf("isoinfo -d lacks the config-2 label:\n%s", desc)
	}
	want := map[string]string{
		"/openstack/latest/user_data":         "#cloud-config\n",
		"/openstack/latest/meta_data.json":    `{"instance_id":"fedora.default","hostname":"fedora","uuid":"5d1c2a3b-1111-5222-8333-944455556666"}`,
		"/openstack/latest/network_data.json": `{"links":[]}`,
	}
	for name, content := range want {
		if got := isoinfo(t, src.Path, "-R", "-x", name); got != content {
			t.Errorf("%s on the ISO is %q, want %q", name, got, content)
		}
	}
	if entries, err := os.ReadDir(filepath.Join(p.Dir, "cloud-init")); err != nil || len(entries) != 1 {
		t.Errorf("cloud-init directory holds %v (%v); the staged data should be gone", entries, err)
	}
}
