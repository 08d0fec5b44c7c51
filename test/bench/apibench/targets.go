package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/apiserver/embeddedetcd"
	"github.com/vireo-dev/vireo/test/bench/measure"
	"github.com/vireo-dev/vireo/test/framework"
)

// apiTarget is vireo-apiserver in-process, reached over HTTPS through the clientset.
type apiTarget struct{ s *framework.APIServer }

func newAPITarget(ctx context.Context, dir string) (*apiTarget, error) {
	s, err := framework.StartAPIServer(ctx, dir)
	if err != nil {
		return nil, err
	}
	return &apiTarget{s: s}, nil
}

func (a *apiTarget) Create(ctx context.Context, ns, name string) error {
	_, err := a.s.Client.KubevirtV1().VirtualMachineInstances(ns).Create(ctx, measure.VMI(ns, name), metav1.CreateOptions{})
	return err
}

func (a *apiTarget) Get(ctx context.Context, ns, name string) error {
	_, err := a.s.Client.KubevirtV1().VirtualMachineInstances(ns).Get(ctx, name, metav1.GetOptions{})
	return err
}

func (a *apiTarget) List(ctx context.Context, ns string) (int, error) {
	l, err := a.s.Client.KubevirtV1().VirtualMachineInstances(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	return len(l.Items), nil
}

func (a *apiTarget) Watch(ctx context.Context, ns string, seen func(string, time.Time)) (func(), error) {
	w, err := a.s.Client.KubevirtV1().VirtualMachineInstances(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	go func() {
		for ev := range w.ResultChan() {
			if vmi, ok := ev.Object.(*v1.VirtualMachineInstance); ok && ev.Type == watch.Added {
				seen(vmi.Name, time.Now())
			}
		}
	}()
	return w.Stop, nil
}

func (a *apiTarget) Close() { a.s.Stop() }

// etcdTarget stores the same objects as JSON straight in an embedded etcd: no HTTP,
// no defaulting, validation, conversion or watch cache. It is the floor.
type etcdTarget struct {
	e *embeddedetcd.Server
	c *clientv3.Client
}

func newEtcdTarget(ctx context.Context, dir string) (*etcdTarget, error) {
	e, err := embeddedetcd.Start(ctx, dir)
	if err != nil {
		return nil, err
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{e.ClientURL}, DialTimeout: 10 * time.Second})
	if err != nil {
		e.Close()
		return nil, err
	}
	return &etcdTarget{e: e, c: c}, nil
}

func key(ns, name string) string { return "/bench/" + ns + "/" + name }

func (t *etcdTarget) Create(ctx context.Context, ns, name string) error {
	data, err := json.Marshal(measure.VMI(ns, name))
	if err != nil {
		return err
	}
	k := key(ns, name)
	// Create-if-absent, as the API server's storage does.
	resp, err := t.c.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(k), "=", 0)).Then(clientv3.OpPut(k, string(data))).Commit()
	if err == nil && !resp.Succeeded {
		err = fmt.Errorf("%s exists", k)
	}
	return err
}

func (t *etcdTarget) Get(ctx context.Context, ns, name string) error {
	resp, err := t.c.Get(ctx, key(ns, name))
	if err != nil {
		return err
	}
	var vmi v1.VirtualMachineInstance
	return json.Unmarshal(resp.Kvs[0].Value, &vmi)
}

func (t *etcdTarget) List(ctx context.Context, ns string) (int, error) {
	resp, err := t.c.Get(ctx, key(ns, ""), clientv3.WithPrefix())
	if err != nil {
		return 0, err
	}
	for _, kv := range resp.Kvs {
		var vmi v1.VirtualMachineInstance
		if err := json.Unmarshal(kv.Value, &vmi); err != nil {
			return 0, err
		}
	}
	return len(resp.Kvs), nil
}

func (t *etcdTarget) Watch(ctx context.Context, ns string, seen func(string, time.Time)) (func(), error) {
	wctx, cancel := context.WithCancel(ctx)
	wc := t.c.Watch(wctx, key(ns, ""), clientv3.WithPrefix())
	go func() {
		for resp := range wc {
			for _, ev := range resp.Events {
				var vmi v1.VirtualMachineInstance
				if ev.IsCreate() && json.Unmarshal(ev.Kv.Value, &vmi) == nil {
					seen(vmi.Name, time.Now())
				}
			}
		}
	}()
	return cancel, nil
}

func (t *etcdTarget) Close() {
	_ = t.c.Close()
	t.e.Close()
}
