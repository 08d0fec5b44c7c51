package main

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/vireo-dev/vireo/test/bench/measure"
)

// objectSizes are the JSON sizes of one stored object as each target returns it.
type objectSizes struct {
	Vireo int `json:"vireoBytes"`
	CRD   int `json:"crdBytes"`
}

// compareStored checks that both targets stored the same object for the same request: the same
// defaulted spec and finalizers, and (unless a status subresource drops it) the same phase. It
// proves the webhooks do the work Vireo does in process, so the two are measured doing the same.
func compareStored(ctx context.Context, vireo, crd *target, ns string, statusSubresource bool) (objectSizes, error) {
	name := measure.Name(0)
	a, err := vireo.res.Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return objectSizes{}, err
	}
	b, err := crd.res.Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return objectSizes{}, err
	}
	// The firmware UUID is random on both sides (as KubeVirt's): it must be set, not equal.
	uuid := []string{"spec", "domain", "firmware", "uuid"}
	for target, obj := range map[string]*unstructured.Unstructured{"vireo": a, "crd": b} {
		if v, _, _ := unstructured.NestedString(obj.Object, uuid...); v == "" {
			return objectSizes{}, fmt.Errorf("%s stored %s/%s without a firmware uuid", target, ns, name)
		}
		unstructured.RemoveNestedField(obj.Object, uuid...)
	}
	fields := [][]string{{"spec"}, {"metadata", "finalizers"}, {"status", "phase"}}
	if statusSubresource {
		fields = fields[:2]
	}
	for _, f := range fields {
		va, _, _ := unstructured.NestedFieldNoCopy(a.Object, f...)
		vb, _, _ := unstructured.NestedFieldNoCopy(b.Object, f...)
		if !reflect.DeepEqual(va, vb) {
			return objectSizes{}, fmt.Errorf("the two targets stored different %v for %s/%s:\nvireo: %v\ncrd:   %v", f, ns, name, va, vb)
		}
	}
	ja, err := json.Marshal(a.Object)
	if err != nil {
		return objectSizes{}, err
	}
	jb, err := json.Marshal(b.Object)
	if err != nil {
		return objectSizes{}, err
	}
	return objectSizes{Vireo: len(ja), CRD: len(jb)}, nil
}
