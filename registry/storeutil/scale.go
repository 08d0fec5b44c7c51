package storeutil

import (
	"context"
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Replicas reads and writes the replica count of a kind that has a /scale subresource.
type Replicas[T Object] struct {
	// Spec returns the replicas wanted (spec.replicas, defaulted on create).
	Spec func(obj T) int32
	// SetSpec sets the replicas wanted.
	SetSpec func(obj T, replicas int32)
	// Status returns the replicas observed and the selector in string form (status.labelSelector).
	Status func(obj T) (replicas int32, selector string)
	// Versions are the served versions of the kind's group, e.g. "kubevirt.io/v1": server-side
	// apply's ownership of spec.replicas moves between the object and its Scale in each of them.
	Versions []string
}

// ScaleREST is the /scale subresource of a kind with replicas: it reads and writes the kind as an
// autoscaling/v1 Scale, which kubectl scale and the HorizontalPodAutoscaler use.
type ScaleREST[T Object] struct {
	store    *genericregistry.Store
	replicas Replicas[T]
}

// NewScaleREST serves /scale of main's objects.
func NewScaleREST[T Object](main *REST, replicas Replicas[T]) *ScaleREST[T] {
	return &ScaleREST[T]{store: main.Store, replicas: replicas}
}

// GroupVersionKind is autoscaling/v1 Scale in every version of the parent's group.
func (r *ScaleREST[T]) GroupVersionKind(schema.GroupVersion) schema.GroupVersionKind {
	return autoscalingv1.SchemeGroupVersion.WithKind("Scale")
}

// New returns an empty Scale.
func (r *ScaleREST[T]) New() runtime.Object { return &autoscalingv1.Scale{} }

// Destroy does nothing: the main store owns the storage.
func (r *ScaleREST[T]) Destroy() {}

// Get returns the object's Scale.
func (r *ScaleREST[T]) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	obj, err := r.store.Get(ctx, name, options)
	if err != nil {
		return nil, err
	}
	return r.scaleOf(obj.(T)), nil
}

// Update writes the replicas of a Scale into the object (through the main strategy, so that the
// object's own validation applies) and returns the new Scale.
func (r *ScaleREST[T]) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, _ bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	info := &scaleObjectInfo[T]{rest: r, request: objInfo}
	obj, _, err := r.store.Update(ctx, name, info,
		func(ctx context.Context, obj runtime.Object) error {
			return createValidation(ctx, r.scaleOf(obj.(T)))
		},
		func(ctx context.Context, obj, old runtime.Object) error {
			return updateValidation(ctx, r.scaleOf(obj.(T)), r.scaleOf(old.(T)))
		}, false, options)
	if err != nil {
		return nil, false, err
	}
	return r.scaleOf(obj.(T)), false, nil
}

// scaleOf is obj as a Scale.
func (r *ScaleREST[T]) scaleOf(obj T) *autoscalingv1.Scale {
	replicas, selector := r.replicas.Status(obj)
	return &autoscalingv1.Scale{
		TypeMeta: metav1.TypeMeta{APIVersion: autoscalingv1.SchemeGroupVersion.String(), Kind: "Scale"},
		ObjectMeta: metav1.ObjectMeta{
			Name: obj.GetName(), Namespace: obj.GetNamespace(), UID: obj.GetUID(),
			ResourceVersion: obj.GetResourceVersion(), CreationTimestamp: obj.GetCreationTimestamp(),
		},
		Spec:   autoscalingv1.ScaleSpec{Replicas: r.replicas.Spec(obj)},
		Status: autoscalingv1.ScaleStatus{Replicas: replicas, Selector: selector},
	}
}

// pathMappings says where spec.replicas is in each served version.
func (r *ScaleREST[T]) pathMappings() managedfields.ResourcePathMappings {
	m := managedfields.ResourcePathMappings{}
	for _, v := range r.replicas.Versions {
		m[v] = fieldpath.MakePathOrDie("spec", "replicas")
	}
	return m
}

// scaleObjectInfo turns the requested Scale into the updated object.
type scaleObjectInfo[T Object] struct {
	rest    *ScaleREST[T]
	request rest.UpdatedObjectInfo
}

func (i *scaleObjectInfo[T]) Preconditions() *metav1.Preconditions { return i.request.Preconditions() }

// UpdatedObject applies the request to the old object's Scale and writes its replicas back, with
// the owners of spec.replicas moved between the object and the Scale.
func (i *scaleObjectInfo[T]) UpdatedObject(ctx context.Context, oldObj runtime.Object) (runtime.Object, error) {
	obj := oldObj.DeepCopyObject().(T)
	gv := schema.GroupVersion{}
	if info, ok := genericapirequest.RequestInfoFrom(ctx); ok {
		gv = schema.GroupVersion{Group: info.APIGroup, Version: info.APIVersion}
	}
	handler := managedfields.NewScaleHandler(obj.GetManagedFields(), gv, i.rest.pathMappings())
	old := i.rest.scaleOf(obj)
	owners, err := handler.ToSubresource()
	if err != nil {
		return nil, err
	}
	old.ManagedFields = owners
	requested, err := i.request.UpdatedObject(ctx, old)
	if err != nil {
		return nil, err
	}
	scale, ok := requested.(*autoscalingv1.Scale)
	if !ok || scale == nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("a /scale update takes an autoscaling/v1 Scale, not %T", requested))
	}
	if scale.Spec.Replicas < 0 {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("spec.replicas: Invalid value: %d: must be 0 or more", scale.Spec.Replicas))
	}
	i.rest.replicas.SetSpec(obj, scale.Spec.Replicas)
	if scale.ResourceVersion != "" {
		// The client's resourceVersion is a precondition of the write.
		obj.SetResourceVersion(scale.ResourceVersion)
	}
	parent, err := handler.ToParent(scale.ManagedFields)
	if err != nil {
		return nil, err
	}
	obj.SetManagedFields(parent)
	return obj, nil
}
