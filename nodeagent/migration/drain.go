package migration

import (
	"context"
	"time"

	"k8s.io/klog/v2"
)

// A node agent that is asked to exit (a DaemonSet rollout, a drain of its Pod) first lets the
// migrations it carries finish: their bytes go through its proxies, so its exit would fail
// them. Meanwhile it starts no new one, as their source or their target; the next agent on the
// node takes those up, within the controller's timeouts of a migration that has not started.

// Carrying is how many migrations this agent has a part in that have not ended: a proxy of
// the source's sockets, or a target it prepares or prepared.
func (m *Manager) Carrying() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, w := range m.records {
		if w.proxy != nil || w.preparing || w.prepared {
			n++
		}
	}
	return n
}

// Drain makes the manager start no new migration and returns once no migration is carried,
// or when ctx ends (the agent's limit on waiting). It polls every interval.
func (m *Manager) Drain(ctx context.Context, interval time.Duration) {
	m.draining.Store(true)
	logged := false
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		n := m.Carrying()
		if n == 0 {
			return
		}
		if !logged {
			klog.InfoS("Waiting for the migrations this node agent carries to end before it exits", "migrations", n)
			logged = true
		}
		select {
		case <-ctx.Done():
			klog.InfoS("Exiting with migrations still carried: they fail", "migrations", m.Carrying())
			return
		case <-ticker.C:
		}
	}
}
