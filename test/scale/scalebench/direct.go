package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// directWave brings Vireo's VMIs from..to-1 to Running without the control path: the
// controller is stopped (it would create launcher Pods, or fail VMIs that run without one),
// the VMIs are created as fast as the clients go, and each one's Running status (VMI 0's, on
// node i % nodes) is written in one status patch, as the CRD wave writes the CRD's. It
// measures what depends on size alone: memory, databases, lists and the watch fan-out.
func (e *env) directWave(ctx context.Context, from, to int) (targetResult, error) {
	r := targetResult{Direct: true}
	if err := e.stopController(ctx); err != nil {
		return r, err
	}
	template, err := runningStatus(ctx, e.cl, e.c)
	if err != nil {
		return r, err
	}
	fast := e.c
	fast.rate = 0
	cr, err := createRange(ctx, fast, from, to, createVireo(e.cl, e.c), func(int, time.Time) {})
	if err != nil {
		return r, err
	}
	r.created(cr, to-from)
	say("  vireo: created %d VMIs at %.0f/s (controller stopped)", to-from, r.CreateThroughput)
	written, err := createRange(ctx, fast, from, to, runDirect(e.cl, e.c, e.nodes, template), func(int, time.Time) {})
	if err != nil {
		return r, fmt.Errorf("writing the VMIs' Running status: %w", err)
	}
	say("  vireo: wrote their Running status at %.0f/s", float64(to-from)/written.wall.Seconds())
	if r.Usage, err = measureUsage(e.cluster); err != nil {
		return r, err
	}
	if r.Restarts, err = e.restarts(ctx); err != nil {
		return r, err
	}
	if n := r.Restarts - e.restartsSoFar; n > 0 {
		r.Problem = fmt.Sprintf("Vireo's components restarted %d time(s) during the wave (see their Pods' last state)", n)
	}
	e.restartsSoFar = r.Restarts
	node, err := e.nodeOfFirstVMI(ctx)
	if err != nil {
		return r, err
	}
	nodeQuery := url.Values{"fieldSelector": {"status.nodeName=" + node}}
	if err := e.measureLists(ctx, &r, withProtobuf(listCases("kubevirt.io", to, e.c.namespaces, nodeQuery))); err != nil {
		return r, err
	}
	return r, e.probe(ctx, &r, to, patchVireo(e.cl, e.c))
}

// runDirect writes VMI i's status: template (Running) on node i % len(nodes), through the
// status subresource, as the harness's administrator.
func runDirect(cl *clients, c config, nodes []string, template map[string]any) func(ctx context.Context, i int) error {
	return func(ctx context.Context, i int) error {
		ns, name := vmiKey(i, c.namespaces)
		status := runtime.DeepCopyJSON(template)
		status["nodeName"] = nodes[i%len(nodes)]
		body, err := json.Marshal(map[string]any{"status": status})
		if err != nil {
			return err
		}
		_, err = cl.vireo.KubevirtV1().VirtualMachineInstances(ns).Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{}, "status")
		return err
	}
}

// stopController scales vireo-controller to 0 and waits until its Pods are gone.
func (e *env) stopController(ctx context.Context) error {
	deployments := e.cl.kube.AppsV1().Deployments(v1.InstallNamespace)
	scale := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "vireo-controller", Namespace: v1.InstallNamespace}}
	if _, err := deployments.UpdateScale(ctx, "vireo-controller", scale, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("scaling vireo-controller to 0: %w", err)
	}
	selector := labels.Set{"app.kubernetes.io/name": "vireo-controller"}.String()
	return wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := e.cl.kube.CoreV1().Pods(v1.InstallNamespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
		return err == nil && len(pods.Items) == 0, nil
	})
}
