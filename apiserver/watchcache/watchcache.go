// Package watchcache is vireo-apiserver's storage decorator: k8s.io/apiserver's watch cache,
// whose snapshots of a resource that has gone quiet survive etcd's compactions.
//
// The watch cache serves the pages after the first of a paged list (those with a continue
// token) from its snapshots, one per change, and forgets the snapshots older than etcd's
// last compaction. etcd is compacted every five minutes to the revision it had five minutes
// before, and each compaction writes a key of its own, so the compacted revision passes the
// last change of a resource that nobody writes to: the watch cache then forgets that
// resource's newest snapshot too, which is the resource as it is now, and every page after
// the first is read and decoded from etcd, a whole scan of it for a label selector, until the
// next change. VMIs are such a resource: 100,000 of them are quiet most of the time.
// Here the cache is told a compacted revision no newer than the last change it saw, so it
// keeps that snapshot (still exact for any revision after it) and drops the older ones as
// before; a continue token older than the compaction is still answered 410 Gone.
package watchcache

import (
	"context"
	"reflect"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage"
	cacherstorage "k8s.io/apiserver/pkg/storage/cacher"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/tools/cache"
)

// Decorator is generic.StorageDecorator for a resource with a watch cache, as the generic
// server's own, with the cache reading etcd through a storage that keeps its newest snapshot.
func Decorator(storageConfig *storagebackend.ConfigForResource, resourcePrefix string, keyFunc func(obj runtime.Object) (string, error),
	newFunc func() runtime.Object, newListFunc func() runtime.Object, getAttrs storage.AttrFunc, triggers storage.IndexerFuncs,
	indexers *cache.Indexers) (storage.Interface, factory.DestroyFunc, error) {
	raw, destroyRaw, err := generic.NewRawStorage(storageConfig, newFunc, newListFunc, resourcePrefix)
	if err != nil {
		return raw, destroyRaw, err
	}
	cacher, err := cacherstorage.NewCacherFromConfig(cacherstorage.Config{
		Storage:             &keepNewest{Interface: raw},
		Versioner:           storage.APIObjectVersioner{},
		GroupResource:       storageConfig.GroupResource,
		EventsHistoryWindow: storageConfig.EventsHistoryWindow,
		ResourcePrefix:      resourcePrefix,
		KeyFunc:             keyFunc,
		NewFunc:             newFunc,
		NewListFunc:         newListFunc,
		GetAttrsFunc:        getAttrs,
		IndexerFuncs:        triggers,
		Indexers:            indexers,
		Codec:               storageConfig.Codec,
	})
	if err != nil {
		destroyRaw()
		return nil, func() {}, err
	}
	delegator := cacherstorage.NewCacheDelegator(cacher, raw)
	var once sync.Once
	return delegator, func() {
		once.Do(func() {
			delegator.Stop()
			cacher.Stop()
			destroyRaw()
		})
	}, nil
}

// keepNewest is the storage the watch cache lists and watches through: it notes the revision
// of the newest change the cache received and reports etcd's compaction as no newer than it.
type keepNewest struct {
	storage.Interface
	newest atomic.Uint64
}

// CompactRevision is the compacted revision the watch cache forgets its snapshots below.
func (s *keepNewest) CompactRevision() int64 {
	return compactedBelow(s.Interface.CompactRevision(), s.newest.Load())
}

// compactedBelow is etcd's compacted revision, lowered to newest (the newest change the cache
// received) when it is past it; 0 (none) stays 0.
func compactedBelow(compacted int64, newest uint64) int64 {
	if newest > 0 && compacted > int64(newest) {
		return int64(newest)
	}
	return compacted
}

// saw notes rv, the revision of a change (or of a list) the watch cache received.
func (s *keepNewest) saw(rv string) {
	n, err := storage.APIObjectVersioner{}.ParseResourceVersion(rv)
	if err != nil {
		return
	}
	for {
		old := s.newest.Load()
		if n <= old || s.newest.CompareAndSwap(old, n) {
			return
		}
	}
}

// GetList is the watch cache's list: the cache takes a snapshot at its revision.
func (s *keepNewest) GetList(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object) error {
	if err := s.Interface.GetList(ctx, key, opts, listObj); err != nil {
		return err
	}
	if l, err := meta.ListAccessor(listObj); err == nil {
		s.saw(l.GetResourceVersion())
	}
	return nil
}

// Watch is the watch cache's watch: its events pass through, their revisions noted.
func (s *keepNewest) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	w, err := s.Interface.Watch(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	return newNotingWatch(w, s), nil
}

// notingWatch relays a watch's events, noting the revision of each change and of the end of
// the initial events (where a watch-list's cache takes its first snapshot); plain bookmarks
// (progress, with no change) are not changes.
type notingWatch struct {
	in   watch.Interface
	out  chan watch.Event
	stop chan struct{}
	once sync.Once
}

func newNotingWatch(in watch.Interface, s *keepNewest) *notingWatch {
	w := &notingWatch{in: in, out: make(chan watch.Event), stop: make(chan struct{})}
	go func() {
		defer close(w.out)
		for ev := range in.ResultChan() {
			if o, err := meta.Accessor(ev.Object); err == nil && isChange(ev.Type, o) {
				s.saw(o.GetResourceVersion())
			}
			select {
			case w.out <- ev:
			case <-w.stop:
				return
			}
		}
	}()
	return w
}

// isChange reports whether an event of type t on o is a change, or the end of the initial
// events; not a plain bookmark (progress) or an error.
func isChange(t watch.EventType, o metav1.Object) bool {
	switch t {
	case watch.Added, watch.Modified, watch.Deleted:
		return true
	case watch.Bookmark:
		return o.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true"
	}
	return false
}

// ResultChan is the relayed events.
func (w *notingWatch) ResultChan() <-chan watch.Event { return w.out }

// Stop stops the watch; the relay ends with it.
func (w *notingWatch) Stop() {
	w.once.Do(func() { close(w.stop) })
	w.in.Stop()
}

// RESTOptionsGetter is getter with Decorator in place of the generic server's watch cache for
// every resource that has one (those without keep theirs).
func RESTOptionsGetter(getter generic.RESTOptionsGetter) generic.RESTOptionsGetter {
	return restOptionsGetter{getter}
}

type restOptionsGetter struct{ generic.RESTOptionsGetter }

func (g restOptionsGetter) GetRESTOptions(resource schema.GroupResource, example runtime.Object) (generic.RESTOptions, error) {
	opts, err := g.RESTOptionsGetter.GetRESTOptions(resource, example)
	if err != nil || opts.Decorator == nil || sameFunc(opts.Decorator, generic.UndecoratedStorage) {
		return opts, err
	}
	opts.Decorator = Decorator
	return opts, nil
}

// sameFunc reports whether decorator is the function f (a closure is never a top-level one).
func sameFunc(decorator, f generic.StorageDecorator) bool {
	return reflect.ValueOf(decorator).Pointer() == reflect.ValueOf(f).Pointer()
}
