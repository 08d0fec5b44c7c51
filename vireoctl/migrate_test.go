package vireoctl

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/generated/clientset/versioned/fake"
)

func TestMigrateOptions(t *testing.T) {
	for _, tc := range []struct {
		name     string
		dryRun   bool
		node     string
		selector map[string]string
		want     map[string]any
	}{
		{"none", false, "", nil, map[string]any{}},
		{"dry run", true, "", nil, map[string]any{"dryRun": []any{"All"}}},
		{"node", false, "n2", map[string]string{"zone": "a"}, map[string]any{"addedNodeSelector": map[string]any{hostnameLabel: "n2", "zone": "a"}}},
	} {
		body, err := migrateOptions(tc.dryRun, tc.node, tc.selector)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var got map[string]any
		if err := json.Unmarshal(body, &got); err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %s, want %v", tc.name, body, tc.want)
		}
	}
	if _, err := migrateOptions(false, "n2", map[string]string{hostnameLabel: "n3"}); err == nil {
		t.Error("--node and a different hostname in --added-node-selector were accepted")
	}
}

func TestCancelMigrations(t *testing.T) {
	mig := func(name, vmi string, phase v1.VirtualMachineInstanceMigrationPhase) *v1.VirtualMachineInstanceMigration {
		return &v1.VirtualMachineInstanceMigration{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
			Spec: v1.VirtualMachineInstanceMigrationSpec{VMIName: vmi}, Status: v1.VirtualMachineInstanceMigrationStatus{Phase: phase}}
	}
	cs := fake.NewSimpleClientset(mig("done", "demo", v1.MigrationSucceeded), mig("running", "demo", v1.MigrationRunning), mig("other", "else", v1.MigrationPending))
	names, err := cancelMigrations(context.Background(), cs, "ns", "demo")
	if err != nil || !reflect.DeepEqual(names, []string{"running"}) {
		t.Fatalf("cancelled %v, %v; want the one in flight", names, err)
	}
	left, _ := cs.KubevirtV1().VirtualMachineInstanceMigrations("ns").List(context.Background(), metav1.ListOptions{})
	if len(left.Items) != 2 {
		t.Errorf("%d migrations left, want the ended one and the other VMI's", len(left.Items))
	}
	if _, err := cancelMigrations(context.Background(), cs, "ns", "demo"); err == nil {
		t.Error("nothing to cancel was not an error")
	}
}

// TestMigrateTakesVirtctlFlags: virtctl's --addedNodeSelector is --added-node-selector.
func TestMigrateTakesVirtctlFlags(t *testing.T) {
	cmd := newMigrateCommand(genericclioptions.NewConfigFlags(false), genericiooptions.NewTestIOStreamsDiscard())
	if err := cmd.ParseFlags([]string{"--addedNodeSelector", "zone=a"}); err != nil {
		t.Fatal(err)
	}
	if got, err := cmd.Flags().GetStringToString("added-node-selector"); err != nil || !reflect.DeepEqual(got, map[string]string{"zone": "a"}) {
		t.Errorf("--addedNodeSelector zone=a gave %v (%v)", got, err)
	}
}
