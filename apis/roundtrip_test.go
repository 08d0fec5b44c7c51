package apis

import (
	"math/rand"
	"testing"

	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	"k8s.io/apimachinery/pkg/api/apitesting/roundtrip"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	runtimeserializer "k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/randfill"

	cdiinstall "github.com/vireo-dev/vireo/apis/cdi/install"
	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	coreinstall "github.com/vireo-dev/vireo/apis/core/install"
	corev1 "github.com/vireo-dev/vireo/apis/core/v1"
	instancetypeinstall "github.com/vireo-dev/vireo/apis/instancetype/install"
	instancetypev1beta1 "github.com/vireo-dev/vireo/apis/instancetype/v1beta1"
	migrationsinstall "github.com/vireo-dev/vireo/apis/migrations/install"
	migrationsv1alpha1 "github.com/vireo-dev/vireo/apis/migrations/v1alpha1"
	poolinstall "github.com/vireo-dev/vireo/apis/pool/install"
	poolv1beta1 "github.com/vireo-dev/vireo/apis/pool/v1beta1"
)

// defaultedFuzzers adds to apimachinery's fuzz functions (which already keep quantities, times,
// object metadata and label selectors valid) only what decoding changes on purpose: the
// declarative defaults of the types (+default tags, applied by the generated defaulters when an
// object is decoded). Every other field of our types must round-trip whatever its value.
func defaultedFuzzers(runtimeserializer.CodecFactory) []interface{} {
	return []interface{}{
		func(p *corev1.Port, c randfill.Continue) {
			c.FillNoCustom(p)
			if p.Protocol == "" {
				p.Protocol = "TCP"
			}
		},
		// An embedded pointer whose fields are all empty has no JSON form: it decodes as nil.
		func(g *corev1.GPU, c randfill.Continue) {
			c.FillNoCustom(g)
			g.ClaimRequest = nilIfEmpty(g.ClaimRequest)
		},
		func(d *corev1.HostDevice, c randfill.Continue) {
			c.FillNoCustom(d)
			d.ClaimRequest = nilIfEmpty(d.ClaimRequest)
		},
	}
}

func nilIfEmpty(r *corev1.ClaimRequest) *corev1.ClaimRequest {
	if r != nil && *r == (corev1.ClaimRequest{}) {
		return nil
	}
	return r
}

// ourKinds are the kinds this repository defines, in their served versions.
var ourKinds = []schema.GroupVersionKind{
	corev1.SchemeGroupVersion.WithKind("VirtualMachineInstance"),
	corev1.SchemeGroupVersion.WithKind("VirtualMachineInstanceList"),
	corev1.SchemeGroupVersion.WithKind("VirtualMachine"),
	corev1.SchemeGroupVersion.WithKind("VirtualMachineList"),
	corev1.SchemeGroupVersion.WithKind("VirtualMachineInstanceMigration"),
	corev1.SchemeGroupVersion.WithKind("VirtualMachineInstanceMigrationList"),
	corev1.SchemeGroupVersion.WithKind("KubeVirt"),
	corev1.SchemeGroupVersion.WithKind("KubeVirtList"),
	corev1.SchemeGroupVersion.WithKind("VirtualMachineInstanceReplicaSet"),
	corev1.SchemeGroupVersion.WithKind("VirtualMachineInstanceReplicaSetList"),
	cdiv1beta1.SchemeGroupVersion.WithKind("DataVolume"),
	cdiv1beta1.SchemeGroupVersion.WithKind("DataVolumeList"),
	migrationsv1alpha1.SchemeGroupVersion.WithKind("MigrationPolicy"),
	migrationsv1alpha1.SchemeGroupVersion.WithKind("MigrationPolicyList"),
	poolv1beta1.SchemeGroupVersion.WithKind("VirtualMachinePool"),
	poolv1beta1.SchemeGroupVersion.WithKind("VirtualMachinePoolList"),
	instancetypev1beta1.SchemeGroupVersion.WithKind("VirtualMachineInstancetype"),
	instancetypev1beta1.SchemeGroupVersion.WithKind("VirtualMachineClusterInstancetype"),
	instancetypev1beta1.SchemeGroupVersion.WithKind("VirtualMachinePreference"),
	instancetypev1beta1.SchemeGroupVersion.WithKind("VirtualMachineClusterPreferenceList"),
}

// TestRoundTripInternal fuzzes each internal object, converts it to every served version, encodes
// it as JSON and back, and checks nothing was lost (it also checks the generated deep copies).
func TestRoundTripInternal(t *testing.T) {
	t.Run("kubevirt.io", func(t *testing.T) {
		roundtrip.RoundTripTestForAPIGroup(t, coreinstall.Install, defaultedFuzzers)
	})
	t.Run("cdi.kubevirt.io", func(t *testing.T) {
		roundtrip.RoundTripTestForAPIGroup(t, cdiinstall.Install, defaultedFuzzers)
	})
	t.Run("migrations.kubevirt.io", func(t *testing.T) {
		roundtrip.RoundTripTestForAPIGroup(t, migrationsinstall.Install, defaultedFuzzers)
	})
	t.Run("pool.kubevirt.io", func(t *testing.T) {
		roundtrip.RoundTripTestForAPIGroup(t, poolinstall.Install, defaultedFuzzers)
	})
	t.Run("instancetype.kubevirt.io", func(t *testing.T) {
		roundtrip.RoundTripTestForAPIGroup(t, instancetypeinstall.Install, defaultedFuzzers)
	})
}

// TestRoundTripExternal fuzzes each versioned object and checks it survives JSON and protobuf
// encoding unchanged.
func TestRoundTripExternal(t *testing.T) {
	scheme := newScheme()
	codecs := runtimeserializer.NewCodecFactory(scheme)
	f := fuzzer.FuzzerFor(
		fuzzer.MergeFuzzerFuncs(metafuzzer.Funcs, defaultedFuzzers),
		rand.NewSource(rand.Int63()),
		codecs,
	)
	for _, gvk := range ourKinds {
		t.Run(gvk.String(), func(t *testing.T) {
			roundtrip.RoundTripSpecificKind(t, gvk, scheme, codecs, f, nil)
		})
	}
}

// TestSchemeHasAllKinds guards against a kind missing from a scheme registration.
func TestSchemeHasAllKinds(t *testing.T) {
	scheme := newScheme()
	for _, gvk := range ourKinds {
		if !scheme.Recognizes(gvk) {
			t.Errorf("scheme does not recognize %v", gvk)
		}
		internal := gvk.GroupKind().WithVersion(runtime.APIVersionInternal)
		if !scheme.Recognizes(internal) {
			t.Errorf("scheme does not recognize internal kind %v", internal)
		}
	}
	for _, gv := range []schema.GroupVersion{corev1.SchemeGroupVersion, cdiv1beta1.SchemeGroupVersion, migrationsv1alpha1.SchemeGroupVersion, poolv1beta1.SchemeGroupVersion,
		instancetypev1beta1.SchemeGroupVersion} {
		if !scheme.IsVersionRegistered(gv) {
			t.Errorf("version %v is not registered", gv)
		}
	}
}

func newScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	coreinstall.Install(scheme)
	cdiinstall.Install(scheme)
	migrationsinstall.Install(scheme)
	poolinstall.Install(scheme)
	instancetypeinstall.Install(scheme)
	return scheme
}

// TestFieldSelectors checks the field selectors node agents and controllers rely on are accepted,
// and that others are refused.
func TestFieldSelectors(t *testing.T) {
	scheme := newScheme()
	accepted := map[schema.GroupVersionKind][]string{
		corev1.SchemeGroupVersion.WithKind("VirtualMachineInstance"):          {"status.nodeName", "status.phase", "metadata.name", "metadata.namespace"},
		corev1.SchemeGroupVersion.WithKind("VirtualMachineInstanceMigration"): {"spec.vmiName", "status.phase"},
		corev1.SchemeGroupVersion.WithKind("VirtualMachine"):                  {"status.printableStatus", "metadata.name"},
		cdiv1beta1.SchemeGroupVersion.WithKind("DataVolume"):                  {"status.phase", "metadata.namespace"},
	}
	for gvk, labels := range accepted {
		for _, label := range labels {
			if _, _, err := scheme.ConvertFieldLabel(gvk, label, "x"); err != nil {
				t.Errorf("%s: field selector %q refused: %v", gvk.Kind, label, err)
			}
		}
		if _, _, err := scheme.ConvertFieldLabel(gvk, "spec.nonsense", "x"); err == nil {
			t.Errorf("%s: field selector spec.nonsense accepted", gvk.Kind)
		}
	}
}
