package main

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/generated/clientset/versioned"
	"github.com/vireo-dev/vireo/test/bench/crdbaseline"
	"github.com/vireo-dev/vireo/test/bench/measure"
	"github.com/vireo-dev/vireo/test/scale/simagent"
)

// watchesPerConnection bounds the watches one client connection carries: HTTP/2 limits the
// streams of a connection (kube-apiserver's default 1000, Go's 250), and a node agent has a
// connection of its own anyway.
const watchesPerConnection = 100

// ownConnection is cfg with a transport of its own (client-go shares one per configuration
// otherwise; a custom dialer opts out).
func ownConnection(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	return c
}

// startAgents runs the simulated node agents of nodes, watchesPerConnection nodes to a
// connection, reporting every event to t. It returns once every watch has listed.
func startAgents(ctx context.Context, cfg *rest.Config, nodes []string, t *tracker) error {
	for from := 0; from < len(nodes); from += watchesPerConnection {
		client, err := versioned.NewForConfig(ownConnection(cfg))
		if err != nil {
			return err
		}
		a := simagent.New(client, nodes[from:min(from+watchesPerConnection, len(nodes))], 4)
		a.OnEvent = t.heard
		if err := a.Run(ctx); err != nil {
			return err
		}
	}
	return nil
}

// watchCRDNodes opens, for each node, the watch KubeVirt's virt-handler has: the CRD's VMIs
// labelled with the node's name, from now on. Every event's probe annotation goes to p.
func watchCRDNodes(ctx context.Context, cfg *rest.Config, nodes []string, p *probes) (stop func(), err error) {
	var watches []watch.Interface
	stop = func() {
		for _, w := range watches {
			w.Stop()
		}
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	now, err := dyn.Resource(crdbaseline.VMIs).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return nil, err
	}
	for i, node := range nodes {
		if i%watchesPerConnection == 0 {
			if dyn, err = dynamic.NewForConfig(ownConnection(cfg)); err != nil {
				stop()
				return nil, err
			}
		}
		w, err := dyn.Resource(crdbaseline.VMIs).Watch(ctx, metav1.ListOptions{LabelSelector: v1.NodeNameLabel + "=" + node, ResourceVersion: now.GetResourceVersion()})
		if err != nil {
			stop()
			return nil, fmt.Errorf("watching the CRD's VMIs of node %s: %w", node, err)
		}
		watches = append(watches, w)
		go func() {
			for ev := range w.ResultChan() {
				if u, ok := ev.Object.(*unstructured.Unstructured); ok && ev.Type == watch.Modified {
					p.heard(u.GetAnnotations()[probeAnnotation], time.Now())
				}
			}
		}()
	}
	return stop, nil
}

// probeFanout writes probes n..n+count-1, each an annotation on one VMI (spread over all of
// them, so over every node), 50 a second from 4 writers, and waits until each was delivered
// by its node's watch or 30 s passed. It returns the write latencies.
func probeFanout(ctx context.Context, p *probes, first, count, vmis int, patch func(ctx context.Context, i int, body []byte) error) ([]time.Duration, error) {
	if count == 0 {
		return nil, nil
	}
	step := max(vmis/count, 1)
	lat := make([]time.Duration, count)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	err := measure.Parallel(4, count, func(k int) error {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return ctx.Err()
		}
		n := first + k
		body := []byte(`{"metadata":{"annotations":{"` + probeAnnotation + `":"` + strconv.Itoa(n) + `"}}}`)
		p.send(n, time.Now())
		return patch(ctx, (k*step)%vmis, body)
	}, lat)
	if err != nil {
		return nil, fmt.Errorf("writing fan-out probes: %w", err)
	}
	_ = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		_, missing := p.result(first, first+count)
		return missing == 0, nil
	})
	return lat, nil
}

// patchVireo and patchCRD merge-patch VMI i of each target.
func patchVireo(cl *clients, c config) func(ctx context.Context, i int, body []byte) error {
	return func(ctx context.Context, i int, body []byte) error {
		ns, name := vmiKey(i, c.namespaces)
		_, err := cl.vireo.KubevirtV1().VirtualMachineInstances(ns).Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{})
		return err
	}
}

func patchCRD(cl *clients, c config) func(ctx context.Context, i int, body []byte) error {
	return func(ctx context.Context, i int, body []byte) error {
		ns, name := vmiKey(i, c.namespaces)
		_, err := cl.dyn.Resource(crdbaseline.VMIs).Namespace(ns).Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{})
		return err
	}
}
