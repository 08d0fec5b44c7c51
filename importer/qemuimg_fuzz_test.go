package importer

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/vireo-dev/vireo/internal/qemuimg"
)

// FuzzImageInfo feeds arbitrary `qemu-img info --output=json` answers, and usable sizes, to
// what the importer decides from them. Vireo never parses a qcow2 (or other) header itself:
// detection only matches magic numbers (FuzzDetect), and qemu-img reads the header; its JSON
// answer carries what the image's author chose (the virtual size, the backing file, the
// external data file, a VMDK's extents). An image that refers to another file must never be
// accepted: QEMU would open that path on the node. So:
//   - reading the answer never panics, and a refusal is a permanent import error with a message;
//   - an accepted image has the detected format, refers to no other file (OtherFile), and has a
//     virtual size above 0 and within the usable size;
//   - read independently of Info (exact keys, as qemu-img writes them), an answer that names a
//     backing file, a data file or an extent other than the image is refused whatever the
//     format.
//
// The seeds are qemu-img 7.2's answers for images it created: qcow2 alone, over a backing file
// and with an external data file, a monolithic sparse VMDK, raw, VHD, VDI and VHDX.
func FuzzImageInfo(f *testing.F) {
	const qcow2 = `{"virtual-size":1048576,"filename":"/proc/self/fd/3","cluster-size":65536,"format":"qcow2","actual-size":200704,` +
		`"format-specific":{"type":"qcow2","data":{"compat":"1.1","compression-type":"zlib","lazy-refcounts":false,"refcount-bits":16,` +
		`"corrupt":false,"extended-l2":false}},"dirty-flag":false}`
	for _, seed := range []string{
		qcow2,
		`{"backing-filename-format":"qcow2","virtual-size":1048576,"filename":"/proc/self/fd/3","cluster-size":65536,"format":"qcow2",` +
			`"actual-size":200704,"format-specific":{"type":"qcow2","data":{"compat":"1.1","compression-type":"zlib","lazy-refcounts":false,` +
			`"refcount-bits":16,"corrupt":false,"extended-l2":false}},"full-backing-filename":"/proc/self/fd/base.qcow2",` +
			`"backing-filename":"base.qcow2","dirty-flag":false}`,
		`{"virtual-size":1048576,"filename":"/proc/self/fd/3","cluster-size":65536,"format":"qcow2","actual-size":200704,` +
			`"format-specific":{"type":"qcow2","data":{"compat":"1.1","compression-type":"zlib","lazy-refcounts":false,"refcount-bits":16,` +
			`"data-file":"data.raw","data-file-raw":false,"corrupt":false,"extended-l2":false}},"dirty-flag":false}`,
		`{"virtual-size":1048576,"filename":"/proc/self/fd/3","cluster-size":65536,"format":"vmdk","actual-size":12288,` +
			`"format-specific":{"type":"vmdk","data":{"cid":3640804248,"parent-cid":4294967295,"create-type":"monolithicSparse",` +
			`"extents":[{"virtual-size":1048576,"filename":"/proc/self/fd/3","cluster-size":65536,"format":""}]}},"dirty-flag":false}`,
		`{"virtual-size":1048576,"filename":"/proc/self/fd/3","format":"vmdk","format-specific":{"type":"vmdk","data":{"extents":` +
			`[{"filename":"/proc/self/fd/3"},{"filename":"/etc/shadow"}]}}}`,
		`{"virtual-size":1048576,"filename":"/proc/self/fd/3","format":"raw","actual-size":4096,"dirty-flag":false}`,
		`{"virtual-size":1079296,"filename":"/proc/self/fd/3","cluster-size":2097152,"format":"vpc","actual-size":4096,"dirty-flag":false}`,
		`{"virtual-size":1048576,"filename":"/proc/self/fd/3","cluster-size":1048576,"format":"vdi","actual-size":4096,"dirty-flag":false}`,
		`{"virtual-size":1048576,"filename":"/proc/self/fd/3","cluster-size":8388608,"format":"vhdx","actual-size":1265664,"dirty-flag":false}`,
		`{"virtual-size":-1,"format":"qcow2"}`, `{"virtual-size":0,"format":"raw"}`, `{"virtual-size":9223372036854775807,"format":"qcow2"}`,
		`{"format":"qcow2","virtual-size":1,"Backing-Filename":"x"}`, `null`, `[]`, ``,
	} {
		f.Add([]byte(seed), int64(15<<20))
	}
	f.Add([]byte(qcow2), int64(1048576))
	f.Add([]byte(qcow2), int64(1048575))
	f.Add([]byte(qcow2), int64(-1))
	formats := []string{FormatQCOW2, FormatRaw, FormatVMDK, FormatVDI, FormatVHDX, FormatVHD, FormatISO}
	f.Fuzz(func(t *testing.T, out []byte, usable int64) {
		info, err := qemuimg.ParseInfo(out)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an answer refused without a message")
			}
			return
		}
		refs, canonical := referencesIn(out)
		kind, other := info.OtherFile()
		for _, format := range formats {
			err := checkImage(info, format, usable)
			if err != nil {
				var e *Error
				if !errors.As(err, &e) || e.Transient || err.Error() == "" {
					t.Fatalf("%s refused with %#v, not a permanent import error with a message", format, err)
				}
				continue
			}
			switch {
			case info.Format != format:
				t.Fatalf("a %q image accepted as %s", info.Format, format)
			case kind != "":
				t.Fatalf("a %s image with %s %q accepted", format, kind, other)
			case info.VirtualSize <= 0 || info.VirtualSize > usable:
				t.Fatalf("a %s image of virtual size %d accepted for %d usable bytes", format, info.VirtualSize, usable)
			case canonical && len(refs) > 0:
				t.Fatalf("a %s image that refers to %q accepted (Info %+v)", format, refs, info)
			}
		}
	})
}

// infoKeys are the keys of qemu-img's answer that Info reads.
var infoKeys = []string{"format", "filename", "virtual-size", "backing-filename", "format-specific", "data", "data-file", "extents"}

// referencesIn reads out as JSON without Info, with exact keys, and returns the files it names
// besides the image: the backing file, the data file, extents other than the image. canonical
// is false when out is no object or a key differs from one of infoKeys only in case (Go's
// decoding into Info does not mind the case; qemu-img writes them in lower case).
func referencesIn(out []byte) (refs []string, canonical bool) {
	var top map[string]any
	if json.Unmarshal(out, &top) != nil || !canonicalKeys(top) {
		return nil, false
	}
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	obj := func(m map[string]any, k string) map[string]any { o, _ := m[k].(map[string]any); return o }
	if s := str(top, "backing-filename"); s != "" {
		refs = append(refs, s)
	}
	data := obj(obj(top, "format-specific"), "data")
	if s := str(data, "data-file"); s != "" {
		refs = append(refs, s)
	}
	extents, _ := data["extents"].([]any)
	for _, e := range extents {
		extent, _ := e.(map[string]any)
		if name := str(extent, "filename"); name != str(top, "filename") {
			refs = append(refs, name)
		}
	}
	return refs, true
}

// canonicalKeys reports whether no key in v's objects differs from one of infoKeys only in case.
func canonicalKeys(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			for _, key := range infoKeys {
				if k != key && strings.EqualFold(k, key) {
					return false
				}
			}
			if !canonicalKeys(child) {
				return false
			}
		}
	case []any:
		for _, child := range v {
			if !canonicalKeys(child) {
				return false
			}
		}
	}
	return true
}
