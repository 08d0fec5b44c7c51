package main

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/vireo-dev/vireo/test/bench/crdbaseline"
)

// target is one way of serving VMIs, reached through kube-apiserver with the dynamic client and
// unstructured objects, so the client does exactly the same work for both.
type target struct {
	name  string
	res   dynamic.NamespaceableResourceInterface
	proto *unstructured.Unstructured
	// latest holds the last object the server returned for each ns/name, so an update is one
	// request (as a controller updating from its cache would send).
	latest sync.Map
	rev    atomic.Int64
}

func newTarget(name string, dyn dynamic.Interface, gvr schema.GroupVersionResource) *target {
	return &target{name: name, res: dyn.Resource(gvr), proto: crdbaseline.Object(gvr.GroupVersion(), "", "")}
}

// object is the benchmark's VMI named ns/name in this target's API version.
func (t *target) object(ns, name string) *unstructured.Unstructured {
	o := t.proto.DeepCopy()
	o.SetNamespace(ns)
	o.SetName(name)
	return o
}

func (t *target) Create(ctx context.Context, ns, name string) error {
	got, err := t.res.Namespace(ns).Create(ctx, t.object(ns, name), metav1.CreateOptions{})
	if err != nil {
		return err
	}
	t.latest.Store(ns+"/"+name, got)
	return nil
}

func (t *target) Get(ctx context.Context, ns, name string) error {
	_, err := t.res.Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	return err
}

func (t *target) List(ctx context.Context, ns string) (int, error) {
	l, err := t.res.Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	return len(l.Items), nil
}

// Update changes a label of an object this target created, with one PUT.
func (t *target) Update(ctx context.Context, ns, name string) error {
	v, ok := t.latest.Load(ns + "/" + name)
	if !ok {
		return fmt.Errorf("%s/%s was not created by this benchmark", ns, name)
	}
	o := v.(*unstructured.Unstructured).DeepCopy()
	labels := o.GetLabels()
	labels["bench-revision"] = strconv.FormatInt(t.rev.Add(1), 10)
	o.SetLabels(labels)
	got, err := t.res.Namespace(ns).Update(ctx, o, metav1.UpdateOptions{})
	if err != nil {
		return err
	}
	t.latest.Store(ns+"/"+name, got)
	return nil
}

func (t *target) Watch(ctx context.Context, ns string, seen func(string, time.Time)) (func(), error) {
	w, err := t.res.Namespace(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	go func() {
		for ev := range w.ResultChan() {
			if o, ok := ev.Object.(*unstructured.Unstructured); ok && ev.Type == watch.Added {
				seen(o.GetName(), time.Now())
			}
		}
	}()
	return w.Stop, nil
}
