package integration

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/metadata"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/generated/clientset/versioned"
)

func mustQuantity(s string) resource.Quantity { return resource.MustParse(s) }

func TestTableColumns(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	vmis := server.Client.KubevirtV1().VirtualMachineInstances(ns)
	vmi, err := vmis.Create(ctx, newVMI("table"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	vmi.Status.NodeName = "node-1"
	vmi.Status.Interfaces = []v1.VirtualMachineInstanceNetworkInterface{{Name: "default", IP: "10.0.0.7"}}
	vmi.Status.Conditions = []v1.VirtualMachineInstanceCondition{{Type: v1.VirtualMachineInstanceReady, Status: v1.ConditionTrue}}
	if _, err := vmis.UpdateStatus(ctx, vmi, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update status: %v", err)
	}

	cases := []struct {
		resource, group string
		want            []string
	}{
		{"virtualmachineinstances", "kubevirt.io/v1", []string{"Name", "Age", "Phase", "IP", "NodeName", "Ready", "Live-Migratable", "Paused"}},
		{"virtualmachines", "kubevirt.io/v1", []string{"Name", "Age", "Status", "Ready"}},
		{"virtualmachineinstancemigrations", "kubevirt.io/v1", []string{"Name", "Phase", "VMI"}},
		{"virtualmachineinstancereplicasets", "kubevirt.io/v1", []string{"Name", "Desired", "Current", "Ready", "Age"}},
		{"virtualmachinepools", "pool.kubevirt.io/v1beta1", []string{"Name", "Desired", "Current", "Ready", "Age"}},
		{"datavolumes", "cdi.kubevirt.io/v1beta1", []string{"Name", "Phase", "Progress", "Restarts", "Age"}},
	}
	for _, c := range cases {
		table := getTable(t, "/apis/"+c.group+"/namespaces/"+ns+"/"+c.resource)
		var got []string
		for _, col := range table.ColumnDefinitions {
			got = append(got, col.Name)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s columns %v, want %v", c.resource, got, c.want)
		}
	}
	table := getTable(t, "/apis/kubevirt.io/v1/namespaces/"+ns+"/virtualmachineinstances/table")
	if len(table.Rows) != 1 {
		t.Fatalf("vmi table rows: %d", len(table.Rows))
	}
	cells := table.Rows[0].Cells
	if cells[0] != "table" || cells[2] != "Pending" || cells[3] != "10.0.0.7" || cells[4] != "node-1" || cells[5] != "True" {
		t.Errorf("vmi row %v, want [table <age> Pending 10.0.0.7 node-1 True ...]", cells)
	}
	if wide := table.ColumnDefinitions[6]; wide.Priority != 1 {
		t.Errorf("Live-Migratable priority %d, want 1 (shown with -o wide)", wide.Priority)
	}
}

func getTable(t *testing.T, path string) *metav1.Table {
	t.Helper()
	body, err := server.Client.KubevirtV1().RESTClient().Get().AbsPath(path).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("GET %s as Table: %v: %s", path, err, body)
	}
	table := &metav1.Table{}
	if err := json.Unmarshal(body, table); err != nil {
		t.Fatalf("decoding table: %v", err)
	}
	return table
}

func TestDiscovery(t *testing.T) {
	disc := server.Client.Discovery()
	list, err := disc.ServerResourcesForGroupVersion("kubevirt.io/v1")
	if err != nil {
		t.Fatalf("discovery kubevirt.io/v1: %v", err)
	}
	want := map[string][]string{
		"virtualmachineinstances":           {"vmi", "vmis"},
		"virtualmachines":                   {"vm", "vms"},
		"virtualmachineinstancemigrations":  {"vmim", "vmims"},
		"virtualmachineinstancereplicasets": {"vmirs", "vmirss"},
	}
	seen := map[string]bool{}
	for _, r := range list.APIResources {
		seen[r.Name] = true
		if short, ok := want[r.Name]; ok {
			if !slices.Equal(r.ShortNames, short) || !slices.Contains(r.Categories, "all") || !r.Namespaced {
				t.Errorf("%s: shortNames %v categories %v namespaced %v", r.Name, r.ShortNames, r.Categories, r.Namespaced)
			}
		}
	}
	for _, r := range []string{"virtualmachineinstances", "virtualmachineinstances/status", "virtualmachines/status", "virtualmachineinstancemigrations/status",
		"virtualmachineinstancereplicasets/status", "virtualmachineinstancereplicasets/scale"} {
		if !seen[r] {
			t.Errorf("discovery lacks %s", r)
		}
	}
	cdi, err := disc.ServerResourcesForGroupVersion("cdi.kubevirt.io/v1beta1")
	if err != nil || len(cdi.APIResources) == 0 || !slices.Equal(cdi.APIResources[0].ShortNames, []string{"dv", "dvs"}) {
		t.Fatalf("discovery cdi.kubevirt.io/v1beta1: %+v, %v", cdi, err)
	}
	groups, err := disc.ServerGroups()
	if err != nil {
		t.Fatalf("server groups: %v", err)
	}
	var groupNames []string
	for _, g := range groups.Groups {
		groupNames = append(groupNames, g.Name)
	}
	for _, g := range []string{"kubevirt.io", "cdi.kubevirt.io", "subresources.kubevirt.io"} {
		if !slices.Contains(groupNames, g) {
			t.Errorf("group %s missing from discovery %v", g, groupNames)
		}
	}
	// KubeVirt's virt-api lists its subresources by name, namespaced, without verbs.
	sub, err := disc.ServerResourcesForGroupVersion("subresources.kubevirt.io/v1")
	if err != nil {
		t.Fatalf("subresources.kubevirt.io/v1: %v", err)
	}
	listed := map[string]bool{}
	for _, r := range sub.APIResources {
		listed[r.Name] = r.Namespaced
	}
	for _, name := range []string{"virtualmachineinstances/console", "virtualmachineinstances/vnc", "virtualmachineinstances/vnc/screenshot",
		"virtualmachineinstances/portforward", "virtualmachineinstances/pause", "virtualmachineinstances/guestosinfo",
		"virtualmachines/start", "virtualmachines/migrate"} {
		if !listed[name] {
			t.Errorf("subresources.kubevirt.io/v1 does not list %s as namespaced: %+v", name, sub.APIResources)
		}
	}
	aggregatedSubresources(t)
}

// aggregatedSubresources: the aggregated discovery document lists subresources.kubevirt.io/v1 as
// kube-aggregator lists KubeVirt's: parent resources (without a kind) with their subresources.
func aggregatedSubresources(t *testing.T) {
	t.Helper()
	body, err := server.Client.KubevirtV1().RESTClient().Get().AbsPath("/apis").
		SetHeader("Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("aggregated discovery: %v", err)
	}
	var list apidiscoveryv2.APIGroupDiscoveryList
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatal(err)
	}
	subresources := map[string][]string{}
	for _, g := range list.Items {
		for _, v := range g.Versions {
			if g.Name != "subresources.kubevirt.io" || v.Version != "v1" {
				continue
			}
			for _, r := range v.Resources {
				for _, s := range r.Subresources {
					subresources[r.Resource] = append(subresources[r.Resource], s.Subresource)
				}
			}
		}
	}
	if !slices.Contains(subresources["virtualmachineinstances"], "console") || !slices.Contains(subresources["virtualmachineinstances"], "vnc/screenshot") ||
		!slices.Contains(subresources["virtualmachines"], "restart") {
		t.Errorf("aggregated discovery of subresources.kubevirt.io/v1: %v", subresources)
	}
}

func TestOpenAPIDescribesFields(t *testing.T) {
	ctx := context.Background()
	rc := server.Client.KubevirtV1().RESTClient()
	v2, err := rc.Get().AbsPath("/openapi/v2").SetHeader("Accept", "application/json").DoRaw(ctx)
	if err != nil {
		t.Fatalf("openapi v2: %v", err)
	}
	var doc struct {
		Definitions map[string]json.RawMessage `json:"definitions"`
	}
	if err := json.Unmarshal(v2, &doc); err != nil {
		t.Fatalf("decoding openapi v2: %v", err)
	}
	vmi := doc.Definitions["com.github.vireo-dev.vireo.apis.core.v1.VirtualMachineInstance"]
	if !strings.Contains(string(vmi), `"x-kubernetes-group-version-kind"`) || !strings.Contains(string(vmi), `"description"`) {
		t.Fatalf("openapi v2 VirtualMachineInstance lacks a GVK or description: %.300s", vmi)
	}
	devices := doc.Definitions["com.github.vireo-dev.vireo.apis.core.v1.Devices"]
	if !strings.Contains(string(devices), `"disks"`) || !strings.Contains(string(devices), `"description"`) {
		t.Fatalf("openapi v2 Devices lacks described disks: %.300s", devices)
	}

	v3, err := rc.Get().AbsPath("/openapi/v3/apis/kubevirt.io/v1").DoRaw(ctx)
	if err != nil {
		t.Fatalf("openapi v3: %v", err)
	}
	if !strings.Contains(string(v3), "com.github.vireo-dev.vireo.apis.core.v1.VirtualMachineInstance") || !strings.Contains(string(v3), "bootOrder") {
		t.Fatalf("openapi v3 kubevirt.io/v1 lacks the VMI schema")
	}
}

func TestInvalidObjectsAreRejectedWithFieldPaths(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	vmis := server.Client.KubevirtV1().VirtualMachineInstances(ns)
	noMemory := newVMI("no-memory")
	noMemory.Spec.Domain.Resources.Requests = nil
	badBus := newVMI("bad-bus")
	badBus.Spec.Domain.Devices.Disks = []v1.Disk{{Name: "root", DiskDevice: v1.DiskDevice{Disk: &v1.DiskTarget{Bus: "ide"}}}}
	orphanDisk := newVMI("orphan")
	orphanDisk.Spec.Domain.Devices.Disks = []v1.Disk{{Name: "root"}, {Name: "ghost"}}
	for _, c := range []struct {
		vmi  *v1.VirtualMachineInstance
		path string
	}{
		{noMemory, "spec.domain.resources.requests.memory"},
		{badBus, "spec.domain.devices.disks[0].disk.bus"},
		{orphanDisk, "spec.domain.devices.disks[1].name"},
	} {
		_, err := vmis.Create(ctx, c.vmi, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) {
			t.Errorf("%s: got %v, want Invalid", c.vmi.Name, err)
			continue
		}
		if !hasCause(err, c.path) {
			t.Errorf("%s: error %q has no cause at %s", c.vmi.Name, err, c.path)
		}
		if _, err := vmis.Get(ctx, c.vmi.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s: an invalid object was stored (%v)", c.vmi.Name, err)
		}
	}
}

func TestReservedLabelsAreRefusedForUsers(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	user, err := versioned.NewForConfig(server.ImpersonatedConfig("alice"))
	if err != nil {
		t.Fatal(err)
	}
	vmi := newVMI("reserved")
	vmi.Labels = map[string]string{"kubevirt.io/nodeName": "node-1"}
	_, err = user.KubevirtV1().VirtualMachineInstances(ns).Create(ctx, vmi, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !hasCause(err, "metadata.labels[kubevirt.io/nodeName]") {
		t.Fatalf("a user setting kubevirt.io/nodeName: got %v, want Invalid at metadata.labels[kubevirt.io/nodeName]", err)
	}
	// Vireo's own components (here the loopback identity) may set it.
	if _, err := server.Client.KubevirtV1().VirtualMachineInstances(ns).Create(ctx, vmi, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a component setting kubevirt.io/nodeName: %v", err)
	}
}

func hasCause(err error, path string) bool {
	return causeMatches(err, func(field string) bool { return field == path })
}

// hasCausePrefix reports whether err has a cause at path or inside it.
func hasCausePrefix(err error, path string) bool {
	return causeMatches(err, func(field string) bool { return strings.HasPrefix(field, path) })
}

func causeMatches(err error, match func(field string) bool) bool {
	status, ok := err.(apierrors.APIStatus)
	if !ok || status.Status().Details == nil {
		return false
	}
	for _, c := range status.Status().Details.Causes {
		if match(c.Field) {
			return true
		}
	}
	return false
}

// TestProtobufPreferringClients covers kube-controller-manager's metadata client (used by
// the namespace and garbage collectors): it asks for protobuf first, which Vireo's types
// do not have, and must get JSON instead of an error.
func TestProtobufPreferringClients(t *testing.T) {
	ctx, ns := context.Background(), namespace(t)
	for _, n := range []string{"m1", "m2"} {
		if _, err := server.Client.KubevirtV1().VirtualMachineInstances(ns).Create(ctx, newVMI("vmi-"+n), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		m := &v1.VirtualMachineInstanceMigration{ObjectMeta: metav1.ObjectMeta{Name: n}, Spec: v1.VirtualMachineInstanceMigrationSpec{VMIName: "vmi-" + n}}
		if _, err := server.Client.KubevirtV1().VirtualMachineInstanceMigrations(ns).Create(ctx, m, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	mc, err := metadata.NewForConfig(server.Config)
	if err != nil {
		t.Fatal(err)
	}
	vmims := mc.Resource(v1.SchemeGroupVersion.WithResource("virtualmachineinstancemigrations")).Namespace(ns)
	list, err := vmims.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 2 {
		t.Fatalf("metadata list: %v items, err %v", list, err)
	}
	if err := vmims.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatalf("metadata deletecollection: %v", err)
	}
	// KubeVirt's migration finalizer holds them (vireo-controller releases it; none runs here).
	left, err := server.Client.KubevirtV1().VirtualMachineInstanceMigrations(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range left.Items {
		if m.DeletionTimestamp == nil {
			t.Errorf("after deletecollection %s is not being deleted", m.Name)
		}
	}
}
