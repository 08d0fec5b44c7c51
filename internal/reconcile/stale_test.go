package reconcile

import "testing"

func TestWrittenVersions(t *testing.T) {
	var w WrittenVersions
	if w.Stale("ns/a", "1") {
		t.Error("an object never written is stale")
	}
	w.Wrote("ns/a", "1")
	if !w.Stale("ns/a", "1") {
		t.Error("the version written over is not stale")
	}
	if w.Stale("ns/b", "1") {
		t.Error("another key is stale")
	}
	if w.Stale("ns/a", "2") || w.Stale("ns/a", "1") {
		t.Error("a newer version did not clear the record")
	}
	w.Wrote("ns/a", "3")
	w.Forget("ns/a")
	if w.Stale("ns/a", "3") {
		t.Error("Forget did not clear the record")
	}
}
