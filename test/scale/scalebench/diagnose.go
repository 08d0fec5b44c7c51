package main

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// whyNotRunning describes where the VMIs of keys that are not Running stand: how many in each
// phase (with the reason of their PodScheduled or Ready condition), and how many launcher Pods
// are pending unscheduled, by reason.
func (e *env) whyNotRunning(ctx context.Context, keys []string) string {
	want := map[string]bool{}
	for _, k := range keys {
		want[k] = true
	}
	vmis, err := e.cl.vireo.KubevirtV1().VirtualMachineInstances("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return "listing the VMIs failed: " + err.Error()
	}
	phases := map[string]int{}
	for i := range vmis.Items {
		vmi := &vmis.Items[i]
		if !want[vmi.Namespace+"/"+vmi.Name] || vmi.Status.Phase == v1.Running {
			continue
		}
		phases[string(vmi.Status.Phase)+conditionReason(vmi)]++
	}
	pods, err := e.cl.kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "status.phase=Pending"})
	if err != nil {
		return describeCounts("VMIs not Running", phases) + "; listing the Pods failed: " + err.Error()
	}
	pending := map[string]int{}
	for _, p := range pods.Items {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
				pending[c.Reason+": "+firstLine(c.Message)]++
			}
		}
	}
	return describeCounts("VMIs not Running", phases) + "; " + describeCounts("Pods pending unscheduled", pending)
}

func conditionReason(vmi *v1.VirtualMachineInstance) string {
	for _, t := range []v1.VirtualMachineInstanceConditionType{v1.VirtualMachineInstancePodScheduled, v1.VirtualMachineInstanceReady} {
		if c := vmi.Status.Condition(t); c != nil && c.Status != v1.ConditionTrue && c.Reason != "" {
			return fmt.Sprintf(" (%s %s: %s)", t, c.Reason, firstLine(c.Message))
		}
	}
	return ""
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 160 {
		s = s[:160] + "..."
	}
	return s
}

func describeCounts(what string, counts map[string]int) string {
	if len(counts) == 0 {
		return what + ": none"
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return counts[keys[i]] > counts[keys[j]] })
	var parts []string
	for _, k := range keys[:min(len(keys), 5)] {
		parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
	}
	return what + ": " + strings.Join(parts, ", ")
}
