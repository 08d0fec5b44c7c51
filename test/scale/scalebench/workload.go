package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"time"

	"golang.org/x/time/rate"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/test/bench/crdbaseline"
	"github.com/vireo-dev/vireo/test/bench/measure"
	"github.com/vireo-dev/vireo/test/scale/simkubelet"
)

// groupLabel puts every VMI in one of groups groups, for the label-selector lists.
const (
	groupLabel = "scale.vireo.dev/group"
	groups     = 100
)

// image is the VMIs' containerDisk, named by digest as the controller pins tags: the
// simulated kubelets pull nothing, and the controller asks no registry.
var image = fmt.Sprintf("registry.local/tiny@sha256:%x", sha256.Sum256([]byte("scalebench")))

// vmiKey names VMI i: its namespace and name.
func vmiKey(i, namespaces int) (ns, name string) {
	return namespaceName(i % namespaces), fmt.Sprintf("vmi-%06d", i)
}

func groupOf(i int) string { return fmt.Sprintf("g%02d", i%groups) }

// vireoVMI is VMI i as a user of the simulated nodes writes it: the benchmarks' VMI, tolerating
// the simulated nodes' taint and selecting them (the controller copies both to its launcher Pod).
func vireoVMI(i, namespaces int) *v1.VirtualMachineInstance {
	ns, name := vmiKey(i, namespaces)
	vmi := measure.VMI(ns, name)
	vmi.Labels[groupLabel] = groupOf(i)
	vmi.Spec.Volumes[0].ContainerDisk.Image = image
	tol := simkubelet.Toleration
	vmi.Spec.Tolerations = []v1.Toleration{{Key: tol.Key, Operator: v1.TolerationOperator(tol.Operator), Value: tol.Value, Effect: v1.TaintEffect(tol.Effect)}}
	vmi.Spec.NodeSelector = map[string]string{simkubelet.Label: "true"}
	return vmi
}

// crdVMI is VMI i of the CRD baseline as its user creates it.
func crdVMI(i, namespaces int) *unstructured.Unstructured {
	ns, name := vmiKey(i, namespaces)
	u := crdbaseline.Object(crdbaseline.VMIs.GroupVersion(), ns, name)
	labels := u.GetLabels()
	labels[groupLabel] = groupOf(i)
	u.SetLabels(labels)
	vols, _, _ := unstructured.NestedSlice(u.Object, "spec", "volumes")
	if len(vols) == 1 {
		vol := vols[0].(map[string]any)
		vol["containerDisk"] = map[string]any{"image": image}
		_ = unstructured.SetNestedSlice(u.Object, vols, "spec", "volumes")
	}
	return u
}

// creation is one wave's creates: each request's latency and the wall time.
type creation struct {
	wall    time.Duration
	latency []time.Duration
}

// createRange creates VMIs from..to-1 with c.creators clients at c.rate per second, calling
// begin(i) just before each request.
func createRange(ctx context.Context, c config, from, to int, create func(ctx context.Context, i int) error, begin func(i int, at time.Time)) (creation, error) {
	n := to - from
	out := creation{latency: make([]time.Duration, n)}
	limit := rate.NewLimiter(rate.Inf, 1)
	if c.rate > 0 {
		limit = rate.NewLimiter(rate.Limit(c.rate), max(1, int(c.rate/10)))
	}
	t0 := time.Now()
	err := measure.Parallel(c.creators, n, func(k int) error {
		if err := limit.Wait(ctx); err != nil {
			return err
		}
		now := time.Now()
		begin(from+k, now)
		if err := create(ctx, from+k); err != nil {
			ns, name := vmiKey(from+k, c.namespaces)
			return fmt.Errorf("VMI %s/%s: %w", ns, name, err)
		}
		out.latency[k] = time.Since(now) // the request, not the wait for the rate
		return nil
	}, nil)
	out.wall = time.Since(t0)
	return out, err
}

// createVireo and createCRD create VMI i of each target.
func createVireo(cl *clients, c config) func(ctx context.Context, i int) error {
	return func(ctx context.Context, i int) error {
		vmi := vireoVMI(i, c.namespaces)
		_, err := cl.vireo.KubevirtV1().VirtualMachineInstances(vmi.Namespace).Create(ctx, vmi, metav1.CreateOptions{})
		return err
	}
}

func createCRD(cl *clients, c config) func(ctx context.Context, i int) error {
	return func(ctx context.Context, i int) error {
		u := crdVMI(i, c.namespaces)
		_, err := cl.dyn.Resource(crdbaseline.VMIs).Namespace(u.GetNamespace()).Create(ctx, u, metav1.CreateOptions{})
		return err
	}
}

// scheduleCRD writes, as KubeVirt's controller (webhook.ComponentUser), what KubeVirt's
// components write on a VMI they scheduled and started: the node label and the status, here
// Vireo's Running status (template) on node i % len(nodes), in one merge patch. The CRD's
// VMIs then hold what Vireo's do, so that both lists carry the same objects.
func scheduleCRD(component dynamic.Interface, c config, nodes []string, template map[string]any) func(ctx context.Context, i int) error {
	return func(ctx context.Context, i int) error {
		ns, name := vmiKey(i, c.namespaces)
		node := nodes[i%len(nodes)]
		status := runtime.DeepCopyJSON(template)
		status["nodeName"] = node
		body, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{v1.NodeNameLabel: node}}, "status": status})
		if err != nil {
			return err
		}
		_, err = component.Resource(crdbaseline.VMIs).Namespace(ns).Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{})
		return err
	}
}

// runningStatus is the status of Vireo's VMI 0, Running, as JSON, without its node.
func runningStatus(ctx context.Context, cl *clients, c config) (map[string]any, error) {
	ns, name := vmiKey(0, c.namespaces)
	vmi, err := cl.vireo.KubevirtV1().VirtualMachineInstances(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	if vmi.Status.Phase != v1.Running {
		return nil, fmt.Errorf("VMI %s/%s is %s, not Running", ns, name, vmi.Status.Phase)
	}
	return runtime.DefaultUnstructuredConverter.ToUnstructured(&vmi.Status)
}
