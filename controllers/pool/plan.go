package pool

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/apis/pool/v1beta1"
	"github.com/vireo-dev/vireo/controllers/ownership"
)

// burstReplicas bounds the VMs one sync creates or deletes, as for replica sets.
const burstReplicas = 250

// Autohealing's defaults (KubeVirt's).
const (
	defaultStartUpFailureThreshold = 3
	defaultMinFailingToStart       = 5 * time.Minute
)

// failingStatuses are the printable statuses of a VM that fails to start.
var failingStatuses = []v1.VirtualMachinePrintableStatus{v1.VirtualMachineStatusCrashLoopBackOff, v1.VirtualMachineStatusUnschedulable,
	v1.VirtualMachineStatusErrImagePull, v1.VirtualMachineStatusImagePullBackOff, v1.VirtualMachineStatusPvcNotFound,
	v1.VirtualMachineStatusDataVolumeError}

// revision names the version of a pool's template: the pool's name and a hash of what its VMs
// are made from (the template and the name generation), set as RevisionLabel on its VMs and
// their VMIs.
func revision(pool *v1beta1.VirtualMachinePool) string {
	// Values of our own types always encode.
	b, _ := json.Marshal([]any{pool.Spec.VirtualMachineTemplate, pool.Spec.NameGeneration})
	h := fnv.New32a()
	_, _ = h.Write(b)
	return fmt.Sprintf("%s-%08x", pool.Name, h.Sum32())
}

// index is the index of a pool's VM named <pool>-<index>, or -1.
func index(pool *v1beta1.VirtualMachinePool, name string) int {
	rest, ok := strings.CutPrefix(name, pool.Name+"-")
	if !ok {
		return -1
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 || strconv.Itoa(n) != rest {
		return -1
	}
	return n
}

// members are the VMs of a namespace as one pool sees them.
type members struct {
	// active are the pool's VMs not being deleted: they count as replicas.
	active []*v1.VirtualMachine
	// adopt are VMs without a controller, named as the pool names its VMs (<pool>-<index>), that
	// the selector matches: a pool deleted with its VMs orphaned and created again takes them
	// back. (KubeVirt adopts any VM the selector matches; one without an index could not be
	// given the pool's indexed template.)
	adopt []*v1.VirtualMachine
	// release are VMs the pool controls that the selector no longer matches.
	release []*v1.VirtualMachine
}

// sortMembers finds the VMs of pool among vms (those of its namespace). A pool being deleted
// adopts nothing.
func sortMembers(pool *v1beta1.VirtualMachinePool, selector labels.Selector, vms []*v1.VirtualMachine) members {
	o := ownership.Sort(pool, selector, vms, func(vm *v1.VirtualMachine) bool { return index(pool, vm.Name) >= 0 })
	return members{active: append(o.Controlled, o.Adopt...), adopt: o.Adopt, release: o.Release}
}

// freeIndexes are the n lowest indexes whose names no VM of the namespace has.
func freeIndexes(pool *v1beta1.VirtualMachinePool, taken map[string]bool, n int) []int {
	var out []int
	for i := 0; len(out) < n; i++ {
		if !taken[fmt.Sprintf("%s-%d", pool.Name, i)] {
			out = append(out, i)
		}
	}
	return out
}

// newVM is the pool's VM of index idx at revision rev: the template's labels and annotations,
// its spec with the index appended to the names of its DataVolume templates (and the volumes
// that use them) and, as nameGeneration asks, of its ConfigMaps and Secrets; owned by the pool.
func newVM(pool *v1beta1.VirtualMachinePool, idx int, rev string) *v1.VirtualMachine {
	vm := &v1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{
		Name:            fmt.Sprintf("%s-%d", pool.Name, idx),
		Namespace:       pool.Namespace,
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(pool, v1beta1.SchemeGroupVersion.WithKind("VirtualMachinePool"))},
	}}
	setTemplate(vm, pool, idx, rev)
	return vm
}

// setTemplate gives vm the pool's template at revision rev.
func setTemplate(vm *v1.VirtualMachine, pool *v1beta1.VirtualMachinePool, idx int, rev string) {
	t := pool.Spec.VirtualMachineTemplate
	vm.Labels = maps.Clone(t.ObjectMeta.Labels)
	if vm.Labels == nil {
		vm.Labels = map[string]string{}
	}
	vm.Labels[v1beta1.RevisionLabel] = rev
	vm.Annotations = maps.Clone(t.ObjectMeta.Annotations)
	vm.Spec = *indexedSpec(pool, idx)
	if vm.Spec.Template != nil {
		if vm.Spec.Template.ObjectMeta.Labels == nil {
			vm.Spec.Template.ObjectMeta.Labels = map[string]string{}
		}
		vm.Spec.Template.ObjectMeta.Labels[v1beta1.RevisionLabel] = rev
	}
}

func indexedSpec(pool *v1beta1.VirtualMachinePool, idx int) *v1.VirtualMachineSpec {
	spec := pool.Spec.VirtualMachineTemplate.Spec.DeepCopy()
	suffix := "-" + strconv.Itoa(idx)
	dataVolumes := map[string]string{}
	for i := range spec.DataVolumeTemplates {
		name := spec.DataVolumeTemplates[i].ObjectMeta.Name
		dataVolumes[name] = name + suffix
		spec.DataVolumeTemplates[i].ObjectMeta.Name = name + suffix
	}
	var configMaps, secrets bool
	if g := pool.Spec.NameGeneration; g != nil {
		configMaps = g.AppendIndexToConfigMapRefs != nil && *g.AppendIndexToConfigMapRefs
		secrets = g.AppendIndexToSecretRefs != nil && *g.AppendIndexToSecretRefs
	}
	if spec.Template == nil {
		return spec
	}
	for i := range spec.Template.Spec.Volumes {
		indexVolume(&spec.Template.Spec.Volumes[i], suffix, dataVolumes, configMaps, secrets)
	}
	return spec
}

// indexVolume renames what a volume refers to for one VM of a pool.
func indexVolume(v *v1.Volume, suffix string, dataVolumes map[string]string, configMaps, secrets bool) {
	switch {
	case v.PersistentVolumeClaim != nil && dataVolumes[v.PersistentVolumeClaim.ClaimName] != "":
		v.PersistentVolumeClaim.ClaimName = dataVolumes[v.PersistentVolumeClaim.ClaimName]
	case v.DataVolume != nil && dataVolumes[v.DataVolume.Name] != "":
		v.DataVolume.Name = dataVolumes[v.DataVolume.Name]
	case v.ConfigMap != nil && configMaps:
		v.ConfigMap.Name += suffix
	case v.Secret != nil && secrets:
		v.Secret.SecretName += suffix
	case v.CloudInitNoCloud != nil && secrets:
		appendToSecretRefs(suffix, v.CloudInitNoCloud.UserDataSecretRef, v.CloudInitNoCloud.NetworkDataSecretRef)
	case v.CloudInitConfigDrive != nil && secrets:
		appendToSecretRefs(suffix, v.CloudInitConfigDrive.UserDataSecretRef, v.CloudInitConfigDrive.NetworkDataSecretRef)
	}
}

func appendToSecretRefs(suffix string, refs ...*v1.LocalObjectReference) {
	for _, r := range refs {
		if r != nil {
			r.Name += suffix
		}
	}
}

func vmReady(vm *v1.VirtualMachine) bool {
	for _, c := range vm.Status.Conditions {
		if c.Type == v1.VirtualMachineReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

// order sorts VMs by a selection policy and keeps those its selectors match. Without a sort
// policy, VMs that are not ready come first, then the highest index (KubeVirt picks at random).
func order(pool *v1beta1.VirtualMachinePool, vms []*v1.VirtualMachine, policy *v1beta1.VirtualMachinePoolSelectionPolicy) []*v1.VirtualMachine {
	out := slices.Clone(vms)
	if policy != nil && policy.Selectors != nil && policy.Selectors.LabelSelector != nil {
		if sel, err := metav1.LabelSelectorAsSelector(policy.Selectors.LabelSelector); err == nil {
			out = slices.DeleteFunc(out, func(vm *v1.VirtualMachine) bool {
				return vm.Spec.Template == nil || !sel.Matches(labels.Set(vm.Spec.Template.ObjectMeta.Labels))
			})
		}
	}
	var sort v1beta1.VirtualMachinePoolSortPolicy
	if policy != nil && policy.SortPolicy != nil {
		sort = *policy.SortPolicy
	}
	byIndex := func(a, b *v1.VirtualMachine) int { return index(pool, a.Name) - index(pool, b.Name) }
	switch sort {
	case v1beta1.SortAscendingOrder:
		slices.SortStableFunc(out, byIndex)
	case v1beta1.SortDescendingOrder:
		slices.SortStableFunc(out, func(a, b *v1.VirtualMachine) int { return byIndex(b, a) })
	case v1beta1.SortNewest:
		slices.SortStableFunc(out, func(a, b *v1.VirtualMachine) int { return b.CreationTimestamp.Compare(a.CreationTimestamp.Time) })
	case v1beta1.SortOldest:
		slices.SortStableFunc(out, func(a, b *v1.VirtualMachine) int { return a.CreationTimestamp.Compare(b.CreationTimestamp.Time) })
	case v1beta1.SortRandom:
		rand.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	default:
		slices.SortStableFunc(out, func(a, b *v1.VirtualMachine) int {
			if ra, rb := vmReady(a), vmReady(b); ra != rb {
				if rb {
					return -1
				}
				return 1
			}
			return byIndex(b, a)
		})
	}
	return out
}

// failing reports whether autohealing replaces vm: its starts failed threshold times in a row,
// or it has been failing to start for the minimum duration.
func failing(a *v1beta1.VirtualMachinePoolAutohealingStrategy, vm *v1.VirtualMachine, now time.Time) bool {
	if a == nil {
		return false
	}
	threshold := defaultStartUpFailureThreshold
	if a.StartUpFailureThreshold != nil {
		threshold = int(*a.StartUpFailureThreshold)
	}
	if f := vm.Status.StartFailure; f != nil && int(f.ConsecutiveFailCount) >= threshold {
		return true
	}
	minimum := defaultMinFailingToStart
	if a.MinFailingToStartDuration != nil {
		minimum = a.MinFailingToStartDuration.Duration
	}
	if !slices.Contains(failingStatuses, vm.Status.PrintableStatus) {
		return false
	}
	for _, c := range vm.Status.Conditions {
		if c.Type == v1.VirtualMachineReady && c.Status != v1.ConditionTrue {
			return now.Sub(c.LastTransitionTime.Time) >= minimum
		}
	}
	return false
}

// maxUnavailable is how many of replicas VMs may be not ready during a proactive update.
func maxUnavailable(pool *v1beta1.VirtualMachinePool, replicas int) int {
	if pool.Spec.MaxUnavailable == nil {
		return replicas
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(pool.Spec.MaxUnavailable, replicas, true)
	if err != nil {
		return replicas
	}
	return max(n, 1)
}
