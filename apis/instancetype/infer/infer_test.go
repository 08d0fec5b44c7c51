package infer

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// sources are claims (by namespace/name) and DataVolumes (by name, in "ns").
type sources struct {
	claims map[string]map[string]string
	dvs    map[string]*cdiv1beta1.DataVolume
}

func (s sources) ClaimLabels(_ context.Context, namespace, name string) (map[string]string, error) {
	l, ok := s.claims[namespace+"/"+name]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "persistentvolumeclaims"}, name)
	}
	return l, nil
}

func (s sources) DataVolume(_ context.Context, _, name string) (*cdiv1beta1.DataVolume, error) {
	dv, ok := s.dvs[name]
	if !ok {
		return nil, apierrors.NewNotFound(cdiv1beta1.Resource("datavolumes"), name)
	}
	return dv, nil
}

var labelled = map[string]string{DefaultInstancetypeLabel: "u1.small", DefaultPreferenceLabel: "fedora", DefaultPreferenceKindLabel: "VirtualMachinePreference"}

func vmWith(volume v1.VolumeSource, policy *v1.InferFromVolumeFailurePolicy) *v1.VirtualMachine {
	return &v1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: "vm", Namespace: "ns"},
		Spec: v1.VirtualMachineSpec{
			Instancetype: &v1.InstancetypeMatcher{InferFromVolume: "root", InferFromVolumeFailurePolicy: policy},
			Preference:   &v1.PreferenceMatcher{InferFromVolume: "root", InferFromVolumeFailurePolicy: policy},
			Template: &v1.VirtualMachineInstanceTemplateSpec{Spec: v1.VirtualMachineInstanceSpec{
				Domain:  v1.DomainSpec{Memory: &v1.Memory{Guest: new(resource.MustParse("1Gi"))}},
				Volumes: []v1.Volume{{Name: "root", VolumeSource: volume}},
			}},
		},
	}
}

// TestInferFromVolumes: the labels of a claim, of a DataVolume, of the claim a DataVolume (or a
// VM's DataVolume template) clones, and of the claim left by a garbage-collected DataVolume name
// the VM's instancetype and preference; the matcher then carries only name and kind.
func TestInferFromVolumes(t *testing.T) {
	src := sources{
		claims: map[string]map[string]string{"ns/disk": labelled, "golden/fedora": labelled, "ns/collected": labelled},
		dvs: map[string]*cdiv1beta1.DataVolume{
			"labelled": {ObjectMeta: metav1.ObjectMeta{Labels: labelled}},
			"clone":    {Spec: cdiv1beta1.DataVolumeSpec{Source: &cdiv1beta1.DataVolumeSource{PVC: &cdiv1beta1.DataVolumeSourcePVC{Namespace: "golden", Name: "fedora"}}}},
		},
	}
	dv := func(name string) v1.VolumeSource {
		return v1.VolumeSource{DataVolume: &v1.DataVolumeSource{Name: name}}
	}
	template := vmWith(dv("templated"), nil)
	template.Spec.DataVolumeTemplates = []v1.DataVolumeTemplateSpec{{ObjectMeta: metav1.ObjectMeta{Name: "templated"},
		Spec: cdiv1beta1.DataVolumeSpec{Source: &cdiv1beta1.DataVolumeSource{PVC: &cdiv1beta1.DataVolumeSourcePVC{Namespace: "golden", Name: "fedora"}}}}}
	for name, vm := range map[string]*v1.VirtualMachine{
		"claim":                  vmWith(v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "disk"}}, nil),
		"labelled DataVolume":    vmWith(dv("labelled"), nil),
		"cloning DataVolume":     vmWith(dv("clone"), nil),
		"collected DataVolume":   vmWith(dv("collected"), nil),
		"DataVolume template":    template,
		"ignored policy, labels": vmWith(dv("labelled"), new(v1.IgnoreInferFromVolumeFailure)),
	} {
		if err := Matchers(context.Background(), src, vm); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if it := vm.Spec.Instancetype; *it != (v1.InstancetypeMatcher{Name: "u1.small"}) {
			t.Errorf("%s: instancetype %+v", name, it)
		}
		if p := vm.Spec.Preference; *p != (v1.PreferenceMatcher{Name: "fedora", Kind: "VirtualMachinePreference"}) {
			t.Errorf("%s: preference %+v", name, p)
		}
	}
}

// TestInferFailures: a volume that names nothing refuses the VM (unchanged) by default; with
// the policy Ignore its matchers are dropped and the template keeps its memory; a volume that is
// missing, or a claim that cannot be read, refuses the VM whatever the policy.
func TestInferFailures(t *testing.T) {
	src := sources{claims: map[string]map[string]string{"ns/plain": {}}}
	plain := v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "plain"}}
	vm := vmWith(plain, nil)
	err := Matchers(context.Background(), src, vm)
	if err == nil || !strings.Contains(err.Error(), "spec.instancetype.inferFromVolume: unable to find required "+DefaultInstancetypeLabel) || vm.Spec.Instancetype.InferFromVolume != "root" {
		t.Errorf("unlabelled claim: %v, matcher %+v", err, vm.Spec.Instancetype)
	}
	vm = vmWith(plain, new(v1.IgnoreInferFromVolumeFailure))
	if err := Matchers(context.Background(), src, vm); err != nil || vm.Spec.Instancetype != nil || vm.Spec.Preference != nil || vm.Spec.Template.Spec.Domain.Memory == nil {
		t.Errorf("ignored: %v, %+v %+v", err, vm.Spec.Instancetype, vm.Spec.Template.Spec.Domain.Memory)
	}
	vm = vmWith(plain, new(v1.IgnoreInferFromVolumeFailure))
	vm.Spec.Instancetype.InferFromVolume = "other"
	if err := Matchers(context.Background(), src, vm); err == nil || !strings.Contains(err.Error(), "unable to find volume other") {
		t.Errorf("missing volume: %v", err)
	}
	missing := v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "gone"}}
	if err := Matchers(context.Background(), src, vmWith(missing, new(v1.IgnoreInferFromVolumeFailure))); !apierrors.IsNotFound(err) {
		t.Errorf("missing claim: %v", err)
	}
	containerDisk := v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "x"}}
	if err := Matchers(context.Background(), src, vmWith(containerDisk, nil)); err == nil || !strings.Contains(err.Error(), "type is not supported") {
		t.Errorf("containerDisk: %v", err)
	}
}
