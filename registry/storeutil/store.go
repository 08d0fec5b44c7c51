package storeutil

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Resource describes one Vireo resource for NewStores.
type Resource[T Object] struct {
	// Plural and Singular are the group-qualified resource names.
	Plural, Singular schema.GroupResource
	ShortNames       []string
	New              func() runtime.Object
	NewList          func() runtime.Object
	Hooks            Hooks[T]
	// SelectableFields returns the fields beyond metadata.name/namespace that field
	// selectors may use; nil means none.
	SelectableFields func(obj T) fields.Set
	// IndexedFields are selectable fields the watch cache indexes: a list or watch that selects
	// one value of such a field is served from the index instead of filtering every object.
	IndexedFields []string
	Table         rest.TableConvertor
}

// REST is the storage of a main resource.
type REST struct {
	*genericregistry.Store
	shortNames []string
	categories []string
}

// ShortNames are published in discovery (kubectl get vmi).
func (r *REST) ShortNames() []string { return r.shortNames }

// Categories puts every namespaced Vireo kind into "all", as KubeVirt's CRDs do.
func (r *REST) Categories() []string { return r.categories }

// StatusREST is the storage of a /status subresource.
type StatusREST struct {
	store *genericregistry.Store
}

// New returns an empty object.
func (r *StatusREST) New() runtime.Object { return r.store.New() }

// Destroy does nothing: the main store owns the storage.
func (r *StatusREST) Destroy() {}

// Get returns the object, for the update and patch flows.
func (r *StatusREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return r.store.Get(ctx, name, options)
}

// Update writes the status of an object.
func (r *StatusREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	// Subresources never create the object they belong to.
	return r.store.Update(ctx, name, objInfo, createValidation, updateValidation, false, options)
}

// GetResetFields tells server-side apply what /status may not change.
func (r *StatusREST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.store.GetResetFields()
}

// ConvertToTable uses the main resource's columns.
func (r *StatusREST) ConvertToTable(ctx context.Context, obj runtime.Object, opts runtime.Object) (*metav1.Table, error) {
	return r.store.ConvertToTable(ctx, obj, opts)
}

// NewStores builds a resource's main and /status storage on the generic registry.
func NewStores[T Object](scheme *runtime.Scheme, getter generic.RESTOptionsGetter, res Resource[T]) (*REST, *StatusREST, error) {
	strategy := NewStrategy(scheme, res.Hooks)
	attrs := func(obj runtime.Object) (labels.Set, fields.Set, error) {
		o := obj.(T)
		var extra fields.Set
		if res.SelectableFields != nil {
			extra = res.SelectableFields(o)
		}
		return labels.Set(o.GetLabels()), addObjectMetaFields(extra, o), nil
	}
	store := &genericregistry.Store{
		NewFunc:                   res.New,
		NewListFunc:               res.NewList,
		DefaultQualifiedResource:  res.Plural,
		SingularQualifiedResource: res.Singular,
		PredicateFunc: func(label labels.Selector, field fields.Selector) storage.SelectionPredicate {
			return storage.SelectionPredicate{Label: label, Field: field, GetAttrs: attrs, IndexFields: res.IndexedFields}
		},
		CreateStrategy:      strategy,
		UpdateStrategy:      strategy,
		DeleteStrategy:      strategy,
		ResetFieldsStrategy: strategy,
		TableConvertor:      res.Table,
	}
	opts := &generic.StoreOptions{RESTOptions: getter, AttrFunc: attrs, Indexers: indexers(res), TriggerFunc: triggers(res)}
	if err := store.CompleteWithOptions(opts); err != nil {
		return nil, nil, err
	}
	statusStore := *store
	status := NewStatusStrategy(strategy)
	statusStore.UpdateStrategy = status
	statusStore.ResetFieldsStrategy = status
	main := &REST{Store: store, shortNames: res.ShortNames}
	if !res.Hooks.ClusterScoped {
		main.categories = []string{"all"}
	}
	return main, &StatusREST{store: &statusStore}, nil
}

func addObjectMetaFields(set fields.Set, obj metav1.Object) fields.Set {
	if set == nil {
		set = fields.Set{}
	}
	set["metadata.name"] = obj.GetName()
	set["metadata.namespace"] = obj.GetNamespace()
	return set
}

// triggers builds the watch cache's trigger functions of a resource's IndexedFields: a watch that
// selects one value of such a field is only handed the events of objects with that value (the
// cache takes one trigger per resource). Indexers serve lists; triggers serve watches.
func triggers[T Object](res Resource[T]) storage.IndexerFuncs {
	if len(res.IndexedFields) == 0 || res.SelectableFields == nil {
		return nil
	}
	f := res.IndexedFields[0]
	return storage.IndexerFuncs{f: func(obj runtime.Object) string {
		o, ok := obj.(T)
		if !ok {
			return ""
		}
		return res.SelectableFields(o)[f]
	}}
}

// indexers builds the watch cache's indexers of a resource's IndexedFields.
func indexers[T Object](res Resource[T]) *cache.Indexers {
	if len(res.IndexedFields) == 0 || res.SelectableFields == nil {
		return nil
	}
	idx := cache.Indexers{}
	for _, f := range res.IndexedFields {
		idx[storage.FieldIndex(f)] = func(obj any) ([]string, error) {
			o, ok := obj.(T)
			if !ok {
				return nil, fmt.Errorf("indexing %s: unexpected object %T", f, obj)
			}
			return []string{res.SelectableFields(o)[f]}, nil
		}
	}
	return &idx
}
