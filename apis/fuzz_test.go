package apis

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	cdivalidation "github.com/vireo-dev/vireo/apis/cdi/validation"
	corev1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/apis/core/validation"
)

// FuzzDecodeDefaultValidate feeds arbitrary manifests through what vireo-apiserver does with a
// write: decoding (YAML and JSON, strict and not), defaulting, and validation of the object as
// created and as an update of itself. Nothing may panic. The seeds are the examples users apply.
func FuzzDecodeDefaultValidate(f *testing.F) {
	examples, _ := filepath.Glob("../artifacts/examples/*.yaml")
	for _, path := range examples {
		if b, err := os.ReadFile(path); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(vmManifest))
	scheme := newScheme()
	var decoders []runtime.Decoder
	for _, yaml := range []bool{true, false} {
		for _, strict := range []bool{true, false} {
			decoders = append(decoders, json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme, scheme,
				json.SerializerOptions{Yaml: yaml, Strict: strict}))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, d := range decoders {
			obj, _, err := d.Decode(data, nil, nil)
			if err != nil {
				continue
			}
			scheme.Default(obj)
			validate(obj)
		}
	})
}

// validate runs the validation of obj's kind, on create and on an update to itself.
func validate(obj runtime.Object) {
	switch o := obj.(type) {
	case *corev1.VirtualMachineInstance:
		validation.ValidateVirtualMachineInstance(o)
		validation.ValidateVirtualMachineInstanceUpdate(o, o.DeepCopy())
		validation.ValidateVirtualMachineInstanceStatusUpdate(o, o.DeepCopy())
	case *corev1.VirtualMachine:
		validation.ValidateVirtualMachine(o)
		validation.ValidateVirtualMachineUpdate(o, o.DeepCopy())
		validation.ValidateVirtualMachineStatusUpdate(o, o.DeepCopy())
	case *corev1.VirtualMachineInstanceMigration:
		validation.ValidateVirtualMachineInstanceMigration(o)
		validation.ValidateVirtualMachineInstanceMigrationUpdate(o, o.DeepCopy())
		validation.ValidateVirtualMachineInstanceMigrationStatusUpdate(o, o.DeepCopy())
	case *corev1.KubeVirt:
		validation.ValidateKubeVirt(o)
		validation.ValidateKubeVirtUpdate(o, o.DeepCopy())
	case *cdiv1beta1.DataVolume:
		cdivalidation.ValidateDataVolume(o)
		cdivalidation.ValidateDataVolumeUpdate(o, o.DeepCopy())
		cdivalidation.ValidateDataVolumeStatusUpdate(o, o.DeepCopy())
	}
}
