package localcluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// fieldManager owns what vireo-local applies.
const fieldManager = "vireo-local"

// Applier writes manifests to a cluster, as `kubectl apply --server-side` or `kubectl create` would.
type Applier struct {
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

// NewApplier connects to the cluster of cfg.
func NewApplier(cfg *rest.Config) (*Applier, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Applier{dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))}, nil
}

// ApplyFile server-side applies every object of a YAML file (forcing ownership).
func (a *Applier) ApplyFile(ctx context.Context, file, namespace string) error {
	objs, err := ReadManifests(file)
	if err != nil {
		return err
	}
	return a.Apply(ctx, objs, namespace)
}

// CreateFile creates every object of a YAML file that does not exist yet.
func (a *Applier) CreateFile(ctx context.Context, file, namespace string) error {
	objs, err := ReadManifests(file)
	if err != nil {
		return err
	}
	for _, obj := range objs {
		ri, err := a.resource(obj, namespace)
		if err != nil {
			return fmt.Errorf("%s: %w", filepath.Base(file), err)
		}
		_, err = ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: fieldManager})
		if apierrors.IsAlreadyExists(err) {
			err = recreateEnded(ctx, ri, obj)
		}
		if err != nil {
			return fmt.Errorf("%s: creating %s %s: %w", filepath.Base(file), obj.GetKind(), obj.GetName(), err)
		}
	}
	return nil
}

// recreateEnded replaces an existing VirtualMachineInstance that has ended (Succeeded or
// Failed: its guest stopped with the nodes at `make down`) with obj, so that the demo boots
// again at the next `up`; anything else that exists is left alone.
func recreateEnded(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured) error {
	if obj.GetKind() != "VirtualMachineInstance" {
		return nil
	}
	existing, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil {
		return err
	}
	if phase, _, _ := unstructured.NestedString(existing.Object, "status", "phase"); phase != "Succeeded" && phase != "Failed" {
		return nil
	}
	uid := existing.GetUID()
	if err := ri.Delete(ctx, obj.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	// vireo-controller releases the VMI's finalizer once its launcher Pod is gone.
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: fieldManager})
		if apierrors.IsAlreadyExists(err) {
			return false, nil
		}
		return true, err
	})
}

// Apply server-side applies objects, forcing ownership of the fields they set.
func (a *Applier) Apply(ctx context.Context, objs []*unstructured.Unstructured, namespace string) error {
	for _, obj := range objs {
		ri, err := a.resource(obj, namespace)
		if err != nil {
			return err
		}
		data, err := json.Marshal(obj.Object)
		if err != nil {
			return err
		}
		force := true
		_, err = ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: fieldManager, Force: &force})
		if err != nil {
			return fmt.Errorf("applying %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	return nil
}

func (a *Applier) resource(obj *unstructured.Unstructured, namespace string) (dynamic.ResourceInterface, error) {
	gvk := obj.GroupVersionKind()
	m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		// A kind served by a just-registered API group: refresh discovery once.
		a.mapper.Reset()
		m, err = a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", gvk, err)
	}
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		return a.dyn.Resource(m.Resource), nil
	}
	if obj.GetNamespace() == "" {
		obj.SetNamespace(namespace)
	}
	return a.dyn.Resource(m.Resource).Namespace(obj.GetNamespace()), nil
}

// ReadManifests decodes every object of a multi-document YAML or JSON file.
func ReadManifests(file string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	objs, err := DecodeManifests(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return objs, nil
}

// DecodeManifests decodes every object of multi-document YAML or JSON.
func DecodeManifests(data []byte) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); err == io.EOF {
			return objs, nil
		} else if err != nil {
			return nil, err
		}
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
}

func withNegotiatedSerializer(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.NegotiatedSerializer = serializer.NewCodecFactory(runtime.NewScheme()).WithoutConversion()
	return c
}

func (c *Cluster) abs(path string) string {
	if p, err := filepath.Abs(path); err == nil {
		return p
	}
	return path
}
