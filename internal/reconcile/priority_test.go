package reconcile

import (
	"context"
	"fmt"
	"slices"
	"testing"
)

// drain takes every queued key from l, in the order its workers would.
func drain(l *Loop) []string {
	var got []string
	for l.queue.Len() > 0 {
		k, _ := l.queue.Get()
		got = append(got, k)
		l.queue.Done(k)
	}
	return got
}

func TestProgressFirstTakesWorkInProgressFirst(t *testing.T) {
	inProgress := map[string]bool{}
	l := NewProgressFirstLoop("test-progress", func(context.Context, string) error { return nil },
		func(key string) bool { return inProgress[key] })
	// Twelve new VMIs, then the first two get their Pods (their next step is queued), then
	// new-3 becomes work in progress while it waits in the queue (Touch moves it).
	for i := range 12 {
		l.EnqueueKey(fmt.Sprintf("ns/new-%d", i))
	}
	inProgress["ns/step-a"], inProgress["ns/step-b"] = true, true
	l.EnqueueKey("ns/step-a")
	l.EnqueueKey("ns/step-b")
	inProgress["ns/new-3"] = true
	l.EnqueueKey("ns/new-3")
	got := drain(l)
	want := []string{"ns/step-a", "ns/step-b", "ns/new-3",
		// One pop in newWorkFraction (the fourth) takes new work even with progress waiting;
		// here progress ran out first.
		"ns/new-0", "ns/new-1", "ns/new-2", "ns/new-4", "ns/new-5", "ns/new-6", "ns/new-7", "ns/new-8",
		"ns/new-9", "ns/new-10", "ns/new-11"}
	if !slices.Equal(got, want) {
		t.Errorf("order %v,\nwant %v", got, want)
	}
}

func TestProgressFirstDoesNotStarveNewWork(t *testing.T) {
	l := NewProgressFirstLoop("test-starve", func(context.Context, string) error { return nil },
		func(key string) bool { return key != "ns/new" })
	l.EnqueueKey("ns/new")
	for i := range 20 {
		l.EnqueueKey(fmt.Sprintf("ns/step-%d", i))
	}
	got := drain(l)
	if i := slices.Index(got, "ns/new"); i < 0 || i >= newWorkFraction {
		t.Errorf("new work came at %d of %v, want within the first %d pops", i, got, newWorkFraction)
	}
	if len(got) != 21 {
		t.Errorf("%d keys handed out, want 21 (each once)", len(got))
	}
}
