package apis

import (
	"strings"
	"testing"

	corev1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// kubeVirtManifest is a KubeVirt object as KubeVirt's documentation writes one, using every
// setting Vireo honours.
const kubeVirtManifest = `
apiVersion: kubevirt.io/v1
kind: KubeVirt
metadata:
  name: kubevirt
  namespace: vireo-system
spec:
  configuration:
    migrations:
      parallelMigrationsPerCluster: 5
      parallelOutboundMigrationsPerNode: 2
      bandwidthPerMigration: 64Mi
      completionTimeoutPerGiB: 800
      progressTimeout: 150
      allowAutoConverge: true
      allowPostCopy: false
    developerConfiguration:
      useEmulation: true
status:
  phase: Deployed
  observedGeneration: 2
  conditions:
  - type: Available
    status: "True"
    reason: AllComponentsReady
`

func TestKubeVirtSettingsManifestDecodes(t *testing.T) {
	obj, _, err := strictYAML(t).Decode([]byte(kubeVirtManifest), nil, nil)
	if err != nil {
		t.Fatalf("strict decode of a KubeVirt settings manifest failed: %v", err)
	}
	kv, ok := obj.(*corev1.KubeVirt)
	if !ok {
		t.Fatalf("decoded %T, want *v1.KubeVirt", obj)
	}
	m := kv.Spec.Configuration.MigrationConfiguration
	if m == nil || *m.ParallelMigrationsPerCluster != 5 || *m.ParallelOutboundMigrationsPerNode != 2 ||
		m.BandwidthPerMigration.String() != "64Mi" || *m.CompletionTimeoutPerGiB != 800 || *m.ProgressTimeout != 150 ||
		!*m.AllowAutoConverge || *m.AllowPostCopy {
		t.Errorf("migrations = %+v", m)
	}
	if d := kv.Spec.Configuration.DeveloperConfiguration; d == nil || !d.UseEmulation {
		t.Errorf("developerConfiguration = %+v", d)
	}
	if st := kv.Status; st.Phase != corev1.KubeVirtPhaseDeployed || *st.ObservedGeneration != 2 ||
		st.Conditions[0].Type != corev1.KubeVirtConditionAvailable {
		t.Errorf("status = %+v", st)
	}
}

// TestUnsupportedKubeVirtSettingsAreRejected: a KubeVirt setting Vireo does not implement is an
// unknown field for strict clients, also inside the strategies it accepts only empty.
func TestUnsupportedKubeVirtSettingsAreRejected(t *testing.T) {
	for _, tc := range []struct{ old, new, field string }{
		{"      progressTimeout: 150\n", "      progressTimeout: 150\n      nodeDrainTaintKey: kubevirt.io/drain\n", "nodeDrainTaintKey"},
		{"      useEmulation: true\n", "      useEmulation: true\n      featureGates: [Snapshot]\n", "featureGates"},
		{"  configuration:\n", "  certificateRotateStrategy:\n    selfSigned: {}\n  configuration:\n", "selfSigned"},
		{"  configuration:\n", "  imagePullPolicy: Always\n  configuration:\n", "imagePullPolicy"},
	} {
		manifest := strings.Replace(kubeVirtManifest, tc.old, tc.new, 1)
		if manifest == kubeVirtManifest {
			t.Fatalf("test manifest was not modified for %s", tc.field)
		}
		_, _, err := strictYAML(t).Decode([]byte(manifest), nil, nil)
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("decode error = %v, want an unknown field error naming %s", err, tc.field)
		}
	}
}
