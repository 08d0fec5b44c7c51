package node

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func TestBackoffDelay(t *testing.T) {
	s := time.Second
	want := []time.Duration{0, 10 * s, 20 * s, 40 * s, 80 * s, 160 * s, 300 * s, 300 * s, 300 * s}
	for streak, w := range want {
		if got := DefaultBackoff.Delay(streak); got != w {
			t.Errorf("Delay(%d) = %v, want %v", streak, got, w)
		}
	}
	if got := DefaultBackoff.Delay(1000); got != 300*s {
		t.Errorf("Delay(1000) = %v, want the cap without overflow", got)
	}
	if got := DefaultBackoff.Delay(-1); got != 0 {
		t.Errorf("Delay(-1) = %v, want 0", got)
	}
}

func TestBackoffNext(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name          string
		streak        int
		ran           time.Duration
		wantDelay     time.Duration
		wantNextCount int
	}{
		{name: "first exit restarts at once", streak: 0, ran: time.Second, wantDelay: 0, wantNextCount: 1},
		{name: "second exit waits 10s", streak: 1, ran: time.Second, wantDelay: 10 * time.Second, wantNextCount: 2},
		{name: "third exit waits 20s", streak: 2, ran: 5 * time.Minute, wantDelay: 20 * time.Second, wantNextCount: 3},
		{name: "capped", streak: 9, ran: time.Minute, wantDelay: 300 * time.Second, wantNextCount: 10},
		{name: "ten minutes up resets", streak: 9, ran: 10 * time.Minute, wantDelay: 0, wantNextCount: 1},
		{name: "just under ten minutes does not", streak: 1, ran: 10*time.Minute - time.Millisecond, wantDelay: 10 * time.Second, wantNextCount: 2},
	}
	for _, c := range cases {
		finished := t0.Add(c.ran)
		at, next := DefaultBackoff.Next(c.streak, t0, finished)
		if at.Sub(finished) != c.wantDelay || next != c.wantNextCount {
			t.Errorf("%s: restart after %v with streak %d, want %v and %d", c.name, at.Sub(finished), next, c.wantDelay, c.wantNextCount)
		}
	}
}

func TestShouldRestart(t *testing.T) {
	cases := []struct {
		policy corev1.RestartPolicy
		code   int32
		want   bool
	}{
		{corev1.RestartPolicyAlways, 0, true},
		{corev1.RestartPolicyAlways, 1, true},
		{"", 0, true},
		{corev1.RestartPolicyOnFailure, 0, false},
		{corev1.RestartPolicyOnFailure, 137, true},
		{corev1.RestartPolicyNever, 0, false},
		{corev1.RestartPolicyNever, 1, false},
	}
	for _, c := range cases {
		if got := ShouldRestart(c.policy, c.code); got != c.want {
			t.Errorf("ShouldRestart(%q, %d) = %v, want %v", c.policy, c.code, got, c.want)
		}
	}
}
