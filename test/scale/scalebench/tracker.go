package main

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// tracker follows the VMIs through the simulated node agents' watches: when each was created
// and when a node's watch first delivered it Running; and the fan-out probes: when each was
// sent and when its node's watch delivered it.
type tracker struct {
	mu      sync.Mutex
	created map[string]time.Time
	running map[string]time.Time
	// failed holds the reason of every VMI a watch delivered Failed.
	failed map[string]string
	probes *probes
}

func newTracker() *tracker {
	return &tracker{created: map[string]time.Time{}, running: map[string]time.Time{}, failed: map[string]string{}, probes: newProbes()}
}

func (t *tracker) begin(key string, at time.Time) {
	t.mu.Lock()
	t.created[key] = at
	t.mu.Unlock()
}

// heard is the simulated node agents' OnEvent.
func (t *tracker) heard(_ string, vmi *v1.VirtualMachineInstance, at time.Time) {
	key := vmi.Namespace + "/" + vmi.Name
	switch vmi.Status.Phase {
	case v1.Running:
		t.mu.Lock()
		if _, seen := t.running[key]; !seen {
			t.running[key] = at
		}
		t.mu.Unlock()
	case v1.Failed:
		t.mu.Lock()
		t.failed[key] = vmi.Status.Reason
		t.mu.Unlock()
	}
	t.probes.heard(vmi.Annotations[probeAnnotation], at)
}

// runningCount is how many of keys were seen Running.
func (t *tracker) runningCount(keys []string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, k := range keys {
		if _, ok := t.running[k]; ok {
			n++
		}
	}
	return n
}

// failures describes the VMIs of keys that failed: how many, and the reason of one.
func (t *tracker) failures(keys []string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	n, example := 0, ""
	for _, k := range keys {
		if reason, ok := t.failed[k]; ok {
			n++
			example = fmt.Sprintf("%s: %s", k, reason)
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d VMIs Failed (%s)", n, example)
}

// createdAt is when the create request of each of keys started.
func (t *tracker) createdAt(keys []string) map[string]time.Time {
	return t.pick(t.created, keys)
}

// runningAt is when a watch first delivered each of keys Running.
func (t *tracker) runningAt(keys []string) map[string]time.Time {
	return t.pick(t.running, keys)
}

func (t *tracker) pick(from map[string]time.Time, keys []string) map[string]time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]time.Time, len(keys))
	for _, k := range keys {
		if at, ok := from[k]; ok {
			out[k] = at
		}
	}
	return out
}

// toRunning is, for each of keys seen Running, the time from the start of its create request.
func (t *tracker) toRunning(keys []string) []time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []time.Duration
	for _, k := range keys {
		r, ok := t.running[k]
		if c, created := t.created[k]; ok && created {
			out = append(out, r.Sub(c))
		}
	}
	return out
}

// probeAnnotation carries a fan-out probe's number.
const probeAnnotation = "scale.vireo.dev/probe"

// probes are the fan-out probes in flight and delivered.
type probes struct {
	mu        sync.Mutex
	sent      map[int]time.Time
	delivered map[int]time.Duration
}

func newProbes() *probes {
	return &probes{sent: map[int]time.Time{}, delivered: map[int]time.Duration{}}
}

// send records that probe n is being written now.
func (p *probes) send(n int, at time.Time) {
	p.mu.Lock()
	p.sent[n] = at
	p.mu.Unlock()
}

// heard records the delivery of the probe an annotation value names, the first time.
func (p *probes) heard(value string, at time.Time) {
	if value == "" {
		return
	}
	n, err := strconv.Atoi(strings.TrimSpace(value))
	if err != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.sent[n]; ok {
		if _, done := p.delivered[n]; !done {
			p.delivered[n] = at.Sub(s)
		}
	}
}

// result returns the delays of probes from..to-1 that were delivered, and how many were not.
func (p *probes) result(from, to int) ([]time.Duration, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []time.Duration
	for n := from; n < to; n++ {
		if d, ok := p.delivered[n]; ok {
			out = append(out, d)
		}
	}
	return out, to - from - len(out)
}
