package domain

import (
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"
)

// TestPinBackingChains: the destination XML of a running containerDisk guest (as libvirt 9.0
// gave it, testdata/migration-*.xml) gets the overlay's backing chain from the live XML, without
// the running domain's indexes, and keeps everything else libvirt wrote.
func TestPinBackingChains(t *testing.T) {
	migratable, live := readTestdata(t, "migration-migratable.xml"), readTestdata(t, "migration-live.xml")
	out, err := PinBackingChains(migratable, live)
	if err != nil {
		t.Fatal(err)
	}
	var dom libvirtxml.Domain
	if err := dom.Unmarshal(out); err != nil {
		t.Fatal(err)
	}
	disks := map[string]libvirtxml.DomainDisk{}
	for _, d := range dom.Devices.Disks {
		disks[d.Target.Dev] = d
	}
	chain := disks["vda"].BackingStore
	if chain == nil || chain.Source == nil || chain.Source.File == nil || chain.Index != 0 || chain.Format == nil || chain.Format.Type != "qcow2" ||
		!strings.HasPrefix(chain.Source.File.File, "/var/lib/vireo/images/sha256-65f950ba") || !endOfChain(chain.BackingStore) {
		t.Fatalf("vda's backing chain = %+v, want the cached image's qcow2, unindexed, ending there", chain)
	}
	if b := disks["sda"].BackingStore; !endOfChain(b) {
		t.Errorf("sda (a raw cloud-init ISO) backing store = %+v, want the empty one libvirt wrote", b)
	}
	if missing := missingElements(t, migratable, out); len(missing) > 0 {
		t.Errorf("elements of the migratable XML lost on the way: %v", missing)
	}
	for _, e := range elements(t, out) {
		if strings.Contains(e, "/disk/") && strings.Contains(e, "index=") {
			t.Errorf("the destination XML carries the running domain's disk indexes: %s", e)
		}
	}

	// A disk that states its chain keeps it; nothing to pin leaves the XML as it was.
	if again, err := PinBackingChains(out, live); err != nil || again != out {
		t.Errorf("pinning a pinned XML changed it (%v)", err)
	}
}

// endOfChain reports whether b is libvirt's empty <backingStore/>: no backing file.
func endOfChain(b *libvirtxml.DomainDiskBackingStore) bool {
	return b != nil && (b.Source == nil || b.Source.File == nil) && b.BackingStore == nil
}

// sameNumber writes an integer in decimal (libvirt writes some in hex, libvirtxml in decimal).
func sameNumber(v string) string {
	if n, err := strconv.ParseInt(v, 0, 64); err == nil {
		return strconv.FormatInt(n, 10)
	}
	return v
}

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// missingElements lists the elements of from (by path and attributes) that to lacks.
func missingElements(t *testing.T, from, to string) []string {
	t.Helper()
	have := elements(t, to)
	var missing []string
	for _, e := range elements(t, from) {
		if i := slices.Index(have, e); i >= 0 {
			have = slices.Delete(have, i, i+1)
			continue
		}
		missing = append(missing, e)
	}
	return missing
}

// elements lists an XML document's elements as path[attr=value ...] text, integers in decimal.
func elements(t *testing.T, doc string) []string {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(doc))
	var path, out []string
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			path = append(path, tok.Name.Local)
			var attrs []string
			for _, a := range tok.Attr {
				if a.Name.Space != "xmlns" && a.Name.Local != "xmlns" {
					attrs = append(attrs, a.Name.Local+"="+sameNumber(a.Value))
				}
			}
			slices.Sort(attrs)
			out = append(out, strings.Join(path, "/")+"["+strings.Join(attrs, " ")+"]")
		case xml.EndElement:
			path = path[:len(path)-1]
		case xml.CharData:
			if s := strings.TrimSpace(string(tok)); s != "" && len(out) > 0 {
				out[len(out)-1] += "=" + s
			}
		}
	}
}
