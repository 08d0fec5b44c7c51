package replicaset

import (
	"cmp"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/controllers/ownership"
	"github.com/vireo-dev/vireo/controllers/replicastatus"
)

// burstReplicas bounds the VMIs one sync creates or deletes, as KubeVirt's controller does
// (its default is 250), so that scaling a set to thousands does not flood the API at once.
const burstReplicas = 250

// members sorts the VMIs of a namespace for one replica set.
type members struct {
	// active are the set's VMIs that are neither finished nor being deleted: they count as replicas.
	active []*v1.VirtualMachineInstance
	// finished are the set's VMIs that succeeded or failed: they are deleted, and replaced.
	finished []*v1.VirtualMachineInstance
	// adopt are VMIs without a controller that the selector matches.
	adopt []*v1.VirtualMachineInstance
	// release are VMIs the set controls that the selector no longer matches.
	release []*v1.VirtualMachineInstance
}

// sortMembers finds the VMIs of rs among vmis (those of its namespace); finished orphans are not
// adopted.
func sortMembers(rs *v1.VirtualMachineInstanceReplicaSet, selector labels.Selector, vmis []*v1.VirtualMachineInstance) members {
	o := ownership.Sort(rs, selector, vmis, func(vmi *v1.VirtualMachineInstance) bool { return !finished(vmi) })
	m := members{adopt: o.Adopt, release: o.Release}
	for _, vmi := range o.Controlled {
		if finished(vmi) {
			m.finished = append(m.finished, vmi)
		} else {
			m.active = append(m.active, vmi)
		}
	}
	m.active = append(m.active, o.Adopt...)
	return m
}

func finished(vmi *v1.VirtualMachineInstance) bool {
	return vmi.Status.Phase == v1.Succeeded || vmi.Status.Phase == v1.Failed
}

func vmiReady(vmi *v1.VirtualMachineInstance) bool {
	c := vmi.Status.Condition(v1.VirtualMachineInstanceReady)
	return c != nil && c.Status == v1.ConditionTrue
}

// wanted is the set's replica count (1 when unset, as on creation).
func wanted(rs *v1.VirtualMachineInstanceReplicaSet) int {
	if rs.Spec.Replicas == nil {
		return 1
	}
	return int(*rs.Spec.Replicas)
}

// deletionOrder returns the n VMIs to delete first when scaling down: those not yet scheduled
// to a node, then those not ready, then the youngest. KubeVirt deletes in list order, which can
// stop a guest that has run for months while a new one is still booting.
func deletionOrder(active []*v1.VirtualMachineInstance, n int) []*v1.VirtualMachineInstance {
	sorted := slices.Clone(active)
	slices.SortStableFunc(sorted, func(a, b *v1.VirtualMachineInstance) int {
		if c := cmp.Compare(progress(a), progress(b)); c != 0 {
			return c
		}
		return b.CreationTimestamp.Compare(a.CreationTimestamp.Time)
	})
	return sorted[:min(n, len(sorted))]
}

// progress ranks how far a VMI has come: 0 not on a node, 1 on a node and not ready, 2 ready.
func progress(vmi *v1.VirtualMachineInstance) int {
	switch {
	case vmi.Status.NodeName == "":
		return 0
	case !vmiReady(vmi):
		return 1
	default:
		return 2
	}
}

// nextStatus is the set's status for its active VMIs, its selector and the error of the last
// scaling (nil when it worked or did not run).
func nextStatus(rs *v1.VirtualMachineInstanceReplicaSet, active []*v1.VirtualMachineInstance, selector labels.Selector, scaleErr error, scaledUp bool, now metav1.Time) v1.VirtualMachineInstanceReplicaSetStatus {
	ready := 0
	for _, vmi := range active {
		if vmiReady(vmi) {
			ready++
		}
	}
	return replicastatus.Next(&rs.Status, len(active), ready, selector, rs.Spec.Paused, scaleErr, scaledUp, now)
}

// pendingTTL is how long a write the cache has not shown is waited for before the set is
// looked at afresh (a lost watch event must not stall the set for ever).
const pendingTTL = 2 * time.Minute

// pending remembers, per replica set, the VMIs the controller created or deleted that the
// informer's cache does not show yet. While any is pending the set is not scaled again: the
// cache would still count the old replicas and the controller would create or delete twice.
type pending struct {
	mu   sync.Mutex
	sets map[string]*writes
}

type writes struct {
	created map[string]bool // names created, not yet in the cache
	deleted map[string]bool // names deleted, still in the cache without a deletion timestamp
	since   time.Time
}

// expect records the names created and deleted by a sync of key.
func (p *pending) expect(key string, created, deleted []string, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sets == nil {
		p.sets = map[string]*writes{}
	}
	w := &writes{created: map[string]bool{}, deleted: map[string]bool{}, since: now}
	for _, n := range created {
		w.created[n] = true
	}
	for _, n := range deleted {
		w.deleted[n] = true
	}
	p.sets[key] = w
}

// settled reports whether the cache (inCache: name -> the VMI, or absent) shows every write of
// key, or the writes have waited longer than pendingTTL.
func (p *pending) settled(key string, inCache map[string]*v1.VirtualMachineInstance, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	w, ok := p.sets[key]
	if !ok {
		return true
	}
	for n := range w.created {
		if inCache[n] != nil {
			delete(w.created, n)
		}
	}
	for n := range w.deleted {
		if vmi := inCache[n]; vmi == nil || vmi.DeletionTimestamp != nil {
			delete(w.deleted, n)
		}
	}
	if len(w.created)+len(w.deleted) == 0 || now.Sub(w.since) > pendingTTL {
		delete(p.sets, key)
		return true
	}
	return false
}

// forget drops the record of a set that is gone.
func (p *pending) forget(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.sets, key)
}
