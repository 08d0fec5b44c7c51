package qemuimg

import "testing"

func TestOtherFile(t *testing.T) {
	withExtent := Info{Format: "vmdk", Filename: "/proc/self/fd/3"}
	withExtent.FormatSpecific.Data.Extents = []struct {
		Filename string `json:"filename"`
	}{{Filename: "/proc/self/fd/3"}, {Filename: "/etc/shadow"}}
	withData := Info{Format: "qcow2"}
	withData.FormatSpecific.Data.DataFile = "/var/lib/secret.raw"
	for _, c := range []struct {
		info       Info
		kind, name string
	}{
		{Info{Format: "raw"}, "", ""},
		{Info{Format: "qcow2", BackingFilename: "/etc/passwd"}, "backing file", "/etc/passwd"},
		{withData, "external data file", "/var/lib/secret.raw"},
		{withExtent, "extent", "/etc/shadow"},
	} {
		if kind, name := c.info.OtherFile(); kind != c.kind || name != c.name {
			t.Errorf("%+v: OtherFile = %q, %q; want %q, %q", c.info, kind, name, c.kind, c.name)
		}
	}
}
