package watchcache

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

func TestCompactedBelow(t *testing.T) {
	for _, tc := range []struct {
		compacted int64
		newest    uint64
		want      int64
	}{
		{0, 0, 0},    // nothing compacted, nothing seen
		{0, 50, 0},   // nothing compacted
		{40, 50, 40}, // compacted before the newest change: as etcd says
		{50, 50, 50}, // compacted at it: its snapshot stays (only older ones go)
		{60, 50, 50}, // compacted past it (a quiet resource): the newest snapshot stays
		{60, 0, 60},  // nothing seen yet
	} {
		if got := compactedBelow(tc.compacted, tc.newest); got != tc.want {
			t.Errorf("compactedBelow(%d, %d) = %d, want %d", tc.compacted, tc.newest, got, tc.want)
		}
	}
}

// TestWatchNotesChanges: the relayed watch passes every event on and notes the revisions of
// changes and of the end of the initial events, never of a plain bookmark; Stop ends it.
func TestWatchNotesChanges(t *testing.T) {
	s := &keepNewest{}
	in := watch.NewFake()
	w := newNotingWatch(in, s)
	vmi := func(rv string, annotations map[string]string) *v1.VirtualMachineInstance {
		return &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv, Annotations: annotations}}
	}
	steps := []struct {
		send   func()
		newest uint64
	}{
		{func() { in.Add(vmi("10", nil)) }, 10},
		{func() { in.Modify(vmi("12", nil)) }, 12},
		{func() { in.Action(watch.Bookmark, vmi("20", nil)) }, 12},
		{func() { in.Delete(vmi("15", nil)) }, 15},
		{func() {
			in.Action(watch.Bookmark, vmi("30", map[string]string{metav1.InitialEventsAnnotationKey: "true"}))
		}, 30},
		{func() { in.Modify(vmi("25", nil)) }, 30}, // never backwards
	}
	for i, step := range steps {
		go step.send()
		if _, ok := <-w.ResultChan(); !ok {
			t.Fatalf("step %d: the watch ended", i)
		}
		if got := s.newest.Load(); got != step.newest {
			t.Errorf("step %d: newest %d, want %d", i, got, step.newest)
		}
	}
	w.Stop()
	if _, ok := <-w.ResultChan(); ok {
		t.Errorf("an event after Stop")
	}
	if !in.IsStopped() {
		t.Errorf("Stop did not stop the watch it relays")
	}
}
