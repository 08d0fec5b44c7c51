package pool

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/apis/pool/v1beta1"
)

func testPool() *v1beta1.VirtualMachinePool {
	return &v1beta1.VirtualMachinePool{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "pool-uid"},
		Spec: v1beta1.VirtualMachinePoolSpec{
			VirtualMachineTemplate: &v1beta1.VirtualMachineTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: v1.VirtualMachineSpec{
					DataVolumeTemplates: []v1.DataVolumeTemplateSpec{{ObjectMeta: metav1.ObjectMeta{Name: "root"}}},
					Template: &v1.VirtualMachineInstanceTemplateSpec{Spec: v1.VirtualMachineInstanceSpec{Volumes: []v1.Volume{
						{Name: "root", VolumeSource: v1.VolumeSource{DataVolume: &v1.DataVolumeSource{Name: "root"}}},
						{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}}}},
						{Name: "init", VolumeSource: v1.VolumeSource{CloudInitNoCloud: &v1.CloudInitNoCloudSource{UserDataSecretRef: &v1.LocalObjectReference{Name: "userdata"}}}},
						{Name: "shared", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "shared"}}},
					}}},
				},
			},
		},
	}
}

// TestNewVMIsIndexed: a pool's VM is named <pool>-<index>, carries the template's labels and the
// revision, and its DataVolume templates (with the volumes using them) get the index, as do its
// ConfigMaps and Secrets only when nameGeneration asks; other claims keep their names.
func TestNewVMIsIndexed(t *testing.T) {
	pool := testPool()
	rev := revision(pool)
	vm := newVM(pool, 3, rev)
	vols := vm.Spec.Template.Spec.Volumes
	if vm.Name != "web-3" || vm.Labels["app"] != "web" || vm.Labels[v1beta1.RevisionLabel] != rev ||
		vm.Spec.Template.ObjectMeta.Labels[v1beta1.RevisionLabel] != rev || !metav1.IsControlledBy(vm, pool) {
		t.Fatalf("VM %s labels %v template labels %v", vm.Name, vm.Labels, vm.Spec.Template.ObjectMeta.Labels)
	}
	if vm.Spec.DataVolumeTemplates[0].ObjectMeta.Name != "root-3" || vols[0].DataVolume.Name != "root-3" ||
		vols[1].ConfigMap.Name != "cfg" || vols[2].CloudInitNoCloud.UserDataSecretRef.Name != "userdata" || vols[3].PersistentVolumeClaim.ClaimName != "shared" {
		t.Errorf("indexed names: %+v", vols)
	}
	if pool.Spec.VirtualMachineTemplate.Spec.DataVolumeTemplates[0].ObjectMeta.Name != "root" {
		t.Error("indexing changed the pool's template")
	}
	pool.Spec.NameGeneration = &v1beta1.VirtualMachinePoolNameGeneration{AppendIndexToConfigMapRefs: new(true), AppendIndexToSecretRefs: new(true)}
	vols = newVM(pool, 0, rev).Spec.Template.Spec.Volumes
	if vols[1].ConfigMap.Name != "cfg-0" || vols[2].CloudInitNoCloud.UserDataSecretRef.Name != "userdata-0" {
		t.Errorf("with nameGeneration: %+v", vols)
	}
	if revision(pool) == rev {
		t.Error("the revision did not change with the template")
	}
}

func TestFreeIndexesAndIndex(t *testing.T) {
	pool := testPool()
	taken := map[string]bool{"web-0": true, "web-2": true, "other-1": true}
	if got := freeIndexes(pool, taken, 3); !slices.Equal(got, []int{1, 3, 4}) {
		t.Errorf("free indexes %v, want [1 3 4]", got)
	}
	for name, want := range map[string]int{"web-12": 12, "web-": -1, "web-01": -1, "web-x": -1, "webs-1": -1, "web--1": -1} {
		if got := index(pool, name); got != want {
			t.Errorf("index(%q) = %d, want %d", name, got, want)
		}
	}
}

func vmAt(name string, ready bool, age time.Duration) *v1.VirtualMachine {
	vm := &v1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(time.Now().Add(-age))}}
	status := v1.ConditionFalse
	if ready {
		status = v1.ConditionTrue
	}
	vm.Status.Conditions = []v1.VirtualMachineCondition{{Type: v1.VirtualMachineReady, Status: status}}
	vm.Spec.Template = &v1.VirtualMachineInstanceTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"n": name}}}
	return vm
}

func names(vms []*v1.VirtualMachine) []string {
	var out []string
	for _, vm := range vms {
		out = append(out, vm.Name)
	}
	return out
}

// TestOrder: without a sort policy the VMs not ready go first, then the highest index; each
// sort policy orders as named; a label selector limits the candidates.
func TestOrder(t *testing.T) {
	pool := testPool()
	vms := []*v1.VirtualMachine{vmAt("web-0", true, time.Hour), vmAt("web-1", false, time.Minute), vmAt("web-2", true, 2*time.Hour), vmAt("web-10", true, time.Second)}
	policy := func(p v1beta1.VirtualMachinePoolSortPolicy) *v1beta1.VirtualMachinePoolSelectionPolicy {
		return &v1beta1.VirtualMachinePoolSelectionPolicy{SortPolicy: &p}
	}
	for _, c := range []struct {
		what   string
		policy *v1beta1.VirtualMachinePoolSelectionPolicy
		want   []string
	}{
		{"default", nil, []string{"web-1", "web-10", "web-2", "web-0"}},
		{"ascending", policy(v1beta1.SortAscendingOrder), []string{"web-0", "web-1", "web-2", "web-10"}},
		{"descending", policy(v1beta1.SortDescendingOrder), []string{"web-10", "web-2", "web-1", "web-0"}},
		{"newest", policy(v1beta1.SortNewest), []string{"web-10", "web-1", "web-0", "web-2"}},
		{"oldest", policy(v1beta1.SortOldest), []string{"web-2", "web-0", "web-1", "web-10"}},
		{"selector", &v1beta1.VirtualMachinePoolSelectionPolicy{Selectors: &v1beta1.VirtualMachinePoolSelectors{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"n": "web-2"}}}}, []string{"web-2"}},
	} {
		if got := names(order(pool, vms, c.policy)); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.what, got, c.want)
		}
	}
	if got := order(pool, vms, policy(v1beta1.SortRandom)); len(got) != 4 {
		t.Errorf("random order lost VMs: %v", names(got))
	}
}

// TestFailing: autohealing replaces a VM after threshold failed starts, or one failing to start
// for the minimum duration; a VM that is merely not ready, or not failing long enough, stays.
func TestFailing(t *testing.T) {
	now := time.Now()
	heal := &v1beta1.VirtualMachinePoolAutohealingStrategy{}
	vm := vmAt("web-0", false, time.Hour)
	if failing(nil, vm, now) || failing(heal, vm, now) {
		t.Error("a VM not ready without failures is replaced")
	}
	vm.Status.StartFailure = &v1.VirtualMachineStartFailure{ConsecutiveFailCount: 3}
	if !failing(heal, vm, now) {
		t.Error("three failed starts do not replace the VM")
	}
	heal.StartUpFailureThreshold = new(uint32(5))
	if failing(heal, vm, now) {
		t.Error("three failed starts replace the VM with a threshold of 5")
	}
	vm.Status.PrintableStatus = v1.VirtualMachineStatusCrashLoopBackOff
	vm.Status.Conditions[0].LastTransitionTime = metav1.NewTime(now.Add(-4 * time.Minute))
	if failing(heal, vm, now) {
		t.Error("replaced after 4 minutes of CrashLoopBackOff, before the default 5")
	}
	heal.MinFailingToStartDuration = &metav1.Duration{Duration: time.Minute}
	if !failing(heal, vm, now) {
		t.Error("not replaced after 4 minutes of CrashLoopBackOff with a minimum of 1")
	}
}

func TestMaxUnavailable(t *testing.T) {
	pool := testPool()
	if got := maxUnavailable(pool, 4); got != 4 {
		t.Errorf("default: %d, want all 4", got)
	}
	pool.Spec.MaxUnavailable = new(intstr.FromString("25%"))
	if got := maxUnavailable(pool, 3); got != 1 {
		t.Errorf("25%% of 3: %d, want 1 (rounded up)", got)
	}
	pool.Spec.MaxUnavailable = new(intstr.FromInt32(0))
	if got := maxUnavailable(pool, 3); got != 1 {
		t.Errorf("0: %d, want 1 (an update must make progress)", got)
	}
}

// TestSortMembers: the pool's own VMs count; an orphan named as a pool's VM that the selector
// matches is adopted (and counts), one named otherwise is left alone, as are VMs other
// controllers own; a VM the pool owns that the selector no longer matches is released; a pool
// being deleted adopts nothing.
func TestSortMembers(t *testing.T) {
	pool := testPool()
	own := []metav1.OwnerReference{*metav1.NewControllerRef(pool, v1beta1.SchemeGroupVersion.WithKind("VirtualMachinePool"))}
	other := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Other", Name: "x", UID: "other", Controller: new(true)}}
	vm := func(name string, labels map[string]string, owners []metav1.OwnerReference) *v1.VirtualMachine {
		return &v1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, OwnerReferences: owners}}
	}
	web, db := map[string]string{"app": "web"}, map[string]string{"app": "db"}
	vms := []*v1.VirtualMachine{
		vm("web-0", web, own), vm("web-1", web, nil), vm("stray", web, nil), vm("web-2", web, other),
		vm("web-3", db, own), vm("web-4", db, nil),
	}
	selector, err := metav1.LabelSelectorAsSelector(&metav1.LabelSelector{MatchLabels: web})
	if err != nil {
		t.Fatal(err)
	}
	names := func(vms []*v1.VirtualMachine) []string {
		var out []string
		for _, vm := range vms {
			out = append(out, vm.Name)
		}
		return out
	}
	m := sortMembers(pool, selector, vms)
	if got := names(m.active); !slices.Equal(got, []string{"web-0", "web-1"}) {
		t.Errorf("active %v", got)
	}
	if got := names(m.adopt); !slices.Equal(got, []string{"web-1"}) {
		t.Errorf("adopt %v", got)
	}
	if got := names(m.release); !slices.Equal(got, []string{"web-3"}) {
		t.Errorf("release %v", got)
	}
	pool.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	if m := sortMembers(pool, selector, vms); len(m.adopt) != 0 || !slices.Equal(names(m.active), []string{"web-0"}) {
		t.Errorf("a pool being deleted: adopt %v active %v", names(m.adopt), names(m.active))
	}
}
