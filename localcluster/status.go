package localcluster

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// ComponentStatus is what `vireo-local status` shows of one process, and what tests read.
type ComponentStatus struct {
	Name    string
	Running bool
	PID     int
	// Wanted: Up started it and Down has not stopped it; if it is not running, it crashed.
	Wanted bool
	// StartedAt is when its current process started (zero when unknown).
	StartedAt time.Time
	// Restarts counts the supervisor's restarts after crashes since Up started it.
	Restarts int
	LogFile  string
}

// ComponentStatus reports the named component (or SupervisorName).
func (c *Cluster) ComponentStatus(name string) (ComponentStatus, error) {
	comp := c.Supervisor()
	if name != SupervisorName {
		var err error
		if comp, err = c.Component(name); err != nil {
			return ComponentStatus{}, err
		}
	}
	return statusOf(comp)
}

func statusOf(comp Component) (ComponentStatus, error) {
	st, err := comp.LoadState()
	pid, running := comp.PID()
	return ComponentStatus{Name: comp.Name, Running: running, PID: pid, Wanted: st.Wanted,
		StartedAt: st.StartedAt, Restarts: st.Restarts, LogFile: comp.LogFile()}, err
}

// Status prints each component, the supervisor, the registry's address and the APIServices.
func (c *Cluster) Status(ctx context.Context) {
	now := time.Now()
	for _, comp := range append(c.Components(), c.Supervisor()) {
		s, err := statusOf(comp)
		c.say("%s", s.Format(now))
		if err != nil {
			c.say("  %v", err)
		}
	}
	c.say("registry at http://%s (plain HTTP; e.g. %s)", c.RegistryAddress(), c.ContainerDiskImage("tiny"))
	st, err := c.APIServiceStatus(ctx)
	if err != nil {
		c.say("APIServices: cannot reach kube-apiserver: %v", err)
		return
	}
	for _, gv := range APIServices {
		name := gv.Version + "." + gv.Group
		c.say("APIService %-28s %s", name, st[name])
	}
	c.podStatus(ctx, now)
}

// podStatus prints Vireo's Pods: readiness, phase, restarts, age and node, as kubectl get
// pods -o wide would.
func (c *Cluster) podStatus(ctx context.Context, now time.Time) {
	client, err := c.kubeClient()
	if err != nil {
		return
	}
	pods, err := client.CoreV1().Pods(v1.InstallNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		c.say("Pods of %s: %v", v1.InstallNamespace, err)
		return
	}
	for _, p := range pods.Items {
		ready, restarts := 0, int32(0)
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Ready {
				ready++
			}
			restarts += cs.RestartCount
		}
		c.say("pod %-40s %d/%d %-9s restarts %-3d age %-8s node %s", v1.InstallNamespace+"/"+p.Name, ready, len(p.Spec.Containers),
			p.Status.Phase, restarts, roundUptime(now.Sub(p.CreationTimestamp.Time)), p.Spec.NodeName)
	}
}

// Format is the status line at now: state, pid, uptime, restarts and log.
func (s ComponentStatus) Format(now time.Time) string {
	state, pid, up := "stopped", "-", "-"
	switch {
	case s.Running:
		state, pid, up = "running", fmt.Sprint(s.PID), "?"
		if !s.StartedAt.IsZero() {
			up = roundUptime(now.Sub(s.StartedAt)).String()
		}
	case s.Wanted:
		state = "crashed"
	}
	return fmt.Sprintf("%-24s %-8s pid %-8s up %-9s restarts %-3d log %s", s.Name, state, pid, up, s.Restarts, s.LogFile)
}

// roundUptime keeps an uptime readable: seconds below an hour, minutes below a day, hours beyond.
func roundUptime(d time.Duration) time.Duration {
	switch {
	case d < 0:
		return 0
	case d < time.Hour:
		return d.Round(time.Second)
	case d < 24*time.Hour:
		return d.Round(time.Minute)
	}
	return d.Round(time.Hour)
}
