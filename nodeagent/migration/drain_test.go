package migration

import (
	"context"
	"testing"
	"time"
)

// TestDrainWaitsForCarriedMigrations: a draining agent waits while it prepares or prepared a
// target and returns once that migration ended; a record with nothing carried does not hold
// it; its limit ends the wait.
func TestDrainWaitsForCarriedMigrations(t *testing.T) {
	m := NewManager(Config{})
	m.record("idle") // seen, nothing carried
	w := m.record("m1")
	m.mu.Lock()
	w.prepared = true
	m.mu.Unlock()
	if n := m.Carrying(); n != 1 {
		t.Fatalf("carrying %d, want 1", n)
	}
	drained := make(chan struct{})
	go func() {
		m.Drain(context.Background(), 10*time.Millisecond)
		close(drained)
	}()
	select {
	case <-drained:
		t.Fatal("drained while a prepared target's migration had not ended")
	case <-time.After(100 * time.Millisecond):
	}
	m.end("m1")
	select {
	case <-drained:
	case <-time.After(5 * time.Second):
		t.Fatal("still draining after the migration ended")
	}
	if !m.draining.Load() {
		t.Error("not draining after Drain")
	}

	stuck := NewManager(Config{})
	w = stuck.record("m2")
	stuck.mu.Lock()
	w.preparing = true
	stuck.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	stuck.Drain(ctx, 10*time.Millisecond)
	if ctx.Err() == nil {
		t.Error("Drain returned before its limit with a migration carried")
	}
}
