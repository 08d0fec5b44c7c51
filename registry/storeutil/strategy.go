// Package storeutil holds what every Vireo resource's registry shares: a strategy that
// keeps spec and status apart, the status subresource, and table conversion. Each
// resource package supplies only its own defaulting, validation, fields and columns.
package storeutil

import (
	"context"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage/names"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Object is a Vireo API object with metadata.
type Object interface {
	runtime.Object
	metav1.Object
}

// Hooks are the resource-specific parts of a strategy. Nil hooks do nothing.
type Hooks[T Object] struct {
	// PrepareForCreate applies defaults to a new object (status already cleared).
	PrepareForCreate func(ctx context.Context, obj T)
	// PrepareForUpdate adjusts a main-resource update (status already restored).
	PrepareForUpdate func(ctx context.Context, obj, old T)
	// Validate checks a new object.
	Validate func(ctx context.Context, obj T) field.ErrorList
	// ValidateUpdate checks an update of the main resource.
	ValidateUpdate func(ctx context.Context, obj, old T) field.ErrorList
	// PrepareForStatusUpdate adjusts an update through /status (spec and metadata already
	// restored), e.g. labels the server derives from status.
	PrepareForStatusUpdate func(ctx context.Context, obj, old T)
	// ValidateStatusUpdate checks an update through /status.
	ValidateStatusUpdate func(ctx context.Context, obj, old T) field.ErrorList
	// ResetStatus clears the status of obj.
	ResetStatus func(obj T)
	// CopyStatus sets dst's status to src's.
	CopyStatus func(dst, src T)
	// CopySpec sets dst's spec to src's.
	CopySpec func(dst, src T)
	// Spec returns obj's spec; a change of it bumps metadata.generation.
	Spec func(obj T) any
	// Warnings returns the API warnings (deprecations) of a created or updated object; kubectl
	// shows them.
	Warnings func(obj T) []string
	// APIVersion names the served version for server-side apply's field resets,
	// e.g. "kubevirt.io/v1".
	APIVersion string
	// ClusterScoped is set for kinds that live outside namespaces (migration policies).
	ClusterScoped bool
}

// Strategy is the create, update and delete strategy of a main resource: users write
// spec and metadata; status changes only through /status.
type Strategy[T Object] struct {
	runtime.ObjectTyper
	names.NameGenerator
	hooks Hooks[T]
}

// NewStrategy builds a strategy from a resource's hooks.
func NewStrategy[T Object](typer runtime.ObjectTyper, hooks Hooks[T]) Strategy[T] {
	return Strategy[T]{ObjectTyper: typer, NameGenerator: names.SimpleNameGenerator, hooks: hooks}
}

// NamespaceScoped is true but for the cluster-scoped kinds.
func (s Strategy[T]) NamespaceScoped() bool { return !s.hooks.ClusterScoped }

// PrepareForCreate clears status and applies the resource's defaults.
func (s Strategy[T]) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	o := obj.(T)
	o.SetGeneration(1)
	if s.hooks.ResetStatus != nil {
		s.hooks.ResetStatus(o)
	}
	if s.hooks.PrepareForCreate != nil {
		s.hooks.PrepareForCreate(ctx, o)
	}
}

// PrepareForUpdate keeps the stored status and bumps the generation on spec changes.
func (s Strategy[T]) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	o, prev := obj.(T), old.(T)
	if s.hooks.CopyStatus != nil {
		s.hooks.CopyStatus(o, prev)
	}
	if s.hooks.PrepareForUpdate != nil {
		s.hooks.PrepareForUpdate(ctx, o, prev)
	}
	if s.hooks.Spec != nil && !apiequality.Semantic.DeepEqual(s.hooks.Spec(o), s.hooks.Spec(prev)) {
		o.SetGeneration(prev.GetGeneration() + 1)
	}
}

// Validate runs the resource's create validation.
func (s Strategy[T]) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	if s.hooks.Validate == nil {
		return nil
	}
	return s.hooks.Validate(ctx, obj.(T))
}

// ValidateUpdate runs the resource's update validation.
func (s Strategy[T]) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	if s.hooks.ValidateUpdate == nil {
		return nil
	}
	return s.hooks.ValidateUpdate(ctx, obj.(T), old.(T))
}

// WarningsOnCreate returns the resource's warnings about the new object.
func (s Strategy[T]) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	if s.hooks.Warnings == nil {
		return nil
	}
	return s.hooks.Warnings(obj.(T))
}

// WarningsOnUpdate returns the resource's warnings about the updated object.
func (s Strategy[T]) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	if s.hooks.Warnings == nil {
		return nil
	}
	return s.hooks.Warnings(obj.(T))
}

// Canonicalize does nothing: stored objects are already canonical.
func (Strategy[T]) Canonicalize(runtime.Object) {}

// AllowCreateOnUpdate is false: PUT of a missing object is an error, as for CRDs.
func (Strategy[T]) AllowCreateOnUpdate(context.Context) bool { return false }

// AllowUnconditionalUpdate is true: an update without resourceVersion is accepted, as for CRDs.
func (Strategy[T]) AllowUnconditionalUpdate(context.Context) bool { return true }

// GetResetFields tells server-side apply that status belongs to /status.
func (s Strategy[T]) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return map[fieldpath.APIVersion]*fieldpath.Set{
		fieldpath.APIVersion(s.hooks.APIVersion): fieldpath.NewSet(fieldpath.MakePathOrDie("status")),
	}
}

// StatusStrategy is the update strategy of /status: only status (and nothing of spec) changes.
type StatusStrategy[T Object] struct {
	Strategy[T]
}

// NewStatusStrategy derives the /status strategy from a main strategy.
func NewStatusStrategy[T Object](main Strategy[T]) StatusStrategy[T] {
	return StatusStrategy[T]{Strategy: main}
}

// PrepareForUpdate keeps the stored spec and metadata that /status may not change.
func (s StatusStrategy[T]) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	o, prev := obj.(T), old.(T)
	if s.hooks.CopySpec != nil {
		s.hooks.CopySpec(o, prev)
	}
	resetMetadataForStatus(o, prev)
	if s.hooks.PrepareForStatusUpdate != nil {
		s.hooks.PrepareForStatusUpdate(ctx, o, prev)
	}
}

// ValidateUpdate runs the resource's status validation.
func (s StatusStrategy[T]) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	if s.hooks.ValidateStatusUpdate == nil {
		return nil
	}
	return s.hooks.ValidateStatusUpdate(ctx, obj.(T), old.(T))
}

// GetResetFields tells server-side apply that /status owns no spec or metadata.
func (s StatusStrategy[T]) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return map[fieldpath.APIVersion]*fieldpath.Set{
		fieldpath.APIVersion(s.hooks.APIVersion): fieldpath.NewSet(
			fieldpath.MakePathOrDie("spec"),
			fieldpath.MakePathOrDie("metadata", "labels"),
			fieldpath.MakePathOrDie("metadata", "annotations"),
		),
	}
}

// resetMetadataForStatus keeps labels, annotations, finalizers and owners of the stored object.
func resetMetadataForStatus(obj, old metav1.Object) {
	obj.SetLabels(old.GetLabels())
	obj.SetAnnotations(old.GetAnnotations())
	obj.SetFinalizers(old.GetFinalizers())
	obj.SetOwnerReferences(old.GetOwnerReferences())
	obj.SetDeletionTimestamp(old.GetDeletionTimestamp())
	obj.SetDeletionGracePeriodSeconds(old.GetDeletionGracePeriodSeconds())
	obj.SetGeneration(old.GetGeneration())
}

var (
	_ rest.RESTCreateStrategy  = Strategy[Object]{}
	_ rest.RESTUpdateStrategy  = Strategy[Object]{}
	_ rest.RESTDeleteStrategy  = Strategy[Object]{}
	_ rest.ResetFieldsStrategy = Strategy[Object]{}
	_ rest.RESTUpdateStrategy  = StatusStrategy[Object]{}
)
