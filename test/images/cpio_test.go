package images

import (
	"bytes"
	"io/fs"
	"strconv"
	"testing"
)

// newcEntry is an archive member as read back from the bytes.
type newcEntry struct {
	ino, mode, nlink, size, rdevMajor, rdevMinor uint64
	name                                         string
	data                                         []byte
}

// readNewc parses a newc archive, checking the magic and the 4-byte alignment.
func readNewc(t *testing.T, b []byte) []newcEntry {
	t.Helper()
	var out []newcEntry
	pos := 0
	field := func(i int) uint64 {
		v, err := strconv.ParseUint(string(b[pos+6+8*i:pos+6+8*i+8]), 16, 32)
		if err != nil {
			t.Fatalf("header field %d at %d: %v", i, pos, err)
		}
		return v
	}
	align := func(n int) int { return (n + 3) &^ 3 }
	for {
		if pos%4 != 0 || pos+110 > len(b) || string(b[pos:pos+6]) != "070701" {
			t.Fatalf("no newc header at offset %d", pos)
		}
		e := newcEntry{ino: field(0), mode: field(1), nlink: field(4), size: field(6), rdevMajor: field(9), rdevMinor: field(10)}
		if field(2) != 0 || field(3) != 0 || field(5) != 0 {
			t.Errorf("entry at %d: owner or mtime not zero", pos)
		}
		namesize := int(field(11))
		e.name = string(b[pos+110 : pos+110+namesize-1])
		if b[pos+110+namesize-1] != 0 {
			t.Fatalf("%s: name not NUL-terminated", e.name)
		}
		pos = align(pos + 110 + namesize)
		e.data = b[pos : pos+int(e.size)]
		pos = align(pos + int(e.size))
		if e.name == "TRAILER!!!" {
			if pos != len(b) {
				t.Errorf("%d bytes after the trailer", len(b)-pos)
			}
			return out
		}
		out = append(out, e)
	}
}

func TestCPIOWriter(t *testing.T) {
	tree := cpioTree{}
	tree.file("/init", 0o755, []byte("#!/bin/sh\n"))
	tree.file("lib/modules/a.ko", 0o644, []byte("12345"))
	tree.symlink("bin/sh", "busybox")
	tree.charDevice("dev/console", 0o600, 5, 1)
	tree.dir("proc")
	var buf bytes.Buffer
	if err := tree.writeTo(&buf); err != nil {
		t.Fatal(err)
	}
	got := readNewc(t, buf.Bytes())
	want := []struct {
		name string
		mode uint64
		data string
	}{
		{"bin", 0o040755, ""},
		{"bin/sh", 0o120777, "busybox"},
		{"dev", 0o040755, ""},
		{"dev/console", 0o020600, ""},
		{"init", 0o100755, "#!/bin/sh\n"},
		{"lib", 0o040755, ""},
		{"lib/modules", 0o040755, ""},
		{"lib/modules/a.ko", 0o100644, "12345"},
		{"proc", 0o040755, ""},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d entries, want %d: %+v", len(got), len(want), got)
	}
	inodes := map[uint64]bool{}
	for i, w := range want {
		g := got[i]
		if g.name != w.name || g.mode != w.mode || string(g.data) != w.data {
			t.Errorf("entry %d: got %s %o %q, want %s %o %q", i, g.name, g.mode, g.data, w.name, w.mode, w.data)
		}
		if inodes[g.ino] || g.ino == 0 {
			t.Errorf("%s: inode %d not unique", g.name, g.ino)
		}
		inodes[g.ino] = true
		wantLinks := uint64(1)
		if g.mode&0o170000 == 0o040000 {
			wantLinks = 2
		}
		if g.nlink != wantLinks {
			t.Errorf("%s: nlink %d, want %d", g.name, g.nlink, wantLinks)
		}
	}
	if c := got[3]; c.rdevMajor != 5 || c.rdevMinor != 1 {
		t.Errorf("dev/console: device %d:%d, want 5:1", c.rdevMajor, c.rdevMinor)
	}
	var again bytes.Buffer
	if err := tree.writeTo(&again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("two writes of one tree differ")
	}
}

func TestCPIOModeRejectsSockets(t *testing.T) {
	if _, err := cpioMode(fs.ModeSocket | 0o644); err == nil {
		t.Error("a socket was accepted")
	}
}
