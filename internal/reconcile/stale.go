package reconcile

import "sync"

// WrittenVersions remembers, per key, the resourceVersion an object had when the controller
// last wrote it. Until the informer delivers the written version, the cache still holds the
// old one: a sync that sees it would act on stale data and its write would only meet a
// conflict. Skipping such syncs saves those writes; the informer's update requeues the key.
type WrittenVersions struct {
	mu       sync.Mutex
	versions map[string]string
}

// Wrote records that the object of key, seen at resourceVersion from, was written.
func (w *WrittenVersions) Wrote(key, from string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.versions == nil {
		w.versions = map[string]string{}
	}
	w.versions[key] = from
}

// Stale reports whether rv is the version the controller last wrote over, that is, whether
// the cache has not caught up with that write yet. A newer version clears the record.
func (w *WrittenVersions) Stale(key, rv string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	from, ok := w.versions[key]
	if !ok {
		return false
	}
	if from == rv {
		return true
	}
	delete(w.versions, key)
	return false
}

// Forget drops the record of key (the object is gone).
func (w *WrittenVersions) Forget(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.versions, key)
}
