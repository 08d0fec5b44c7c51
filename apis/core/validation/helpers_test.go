package validation

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vireo-dev/vireo/apis/core"
)

// fe is an expected field error: its type and full path.
type fe struct {
	typ  field.ErrorType
	path string
}

// Shorthands for the expected error types.
const (
	required     = field.ErrorTypeRequired
	invalid      = field.ErrorTypeInvalid
	notSupported = field.ErrorTypeNotSupported
	forbidden    = field.ErrorTypeForbidden
	duplicate    = field.ErrorTypeDuplicate
	tooLong      = field.ErrorTypeTooLong
)

// expectErrors fails the test unless got holds exactly the errors in want, in order, and every
// error carries a message.
func expectErrors(t *testing.T, got field.ErrorList, want ...fe) {
	t.Helper()
	var g, w []string
	for _, e := range got {
		g = append(g, fmt.Sprintf("%s %s", e.Type, e.Field))
		// Duplicate and NotSupported errors speak for themselves; metadata errors are apimachinery's.
		generic := e.Type == field.ErrorTypeDuplicate || e.Type == field.ErrorTypeNotSupported ||
			strings.HasPrefix(e.Field, "metadata.")
		if !generic && e.Detail == "" {
			t.Errorf("error %q has no message", e.Error())
		}
	}
	for _, e := range want {
		w = append(w, fmt.Sprintf("%s %s", e.typ, e.path))
	}
	if strings.Join(g, "\n") != strings.Join(w, "\n") {
		t.Errorf("errors:\n got: %v\nwant: %v\nfull: %v", g, w, got)
	}
}

// q parses a quantity.
func q(s string) resource.Quantity { return resource.MustParse(s) }

// qp parses a quantity and returns a pointer to it.
func qp(s string) *resource.Quantity { v := resource.MustParse(s); return &v }

// ptr returns a pointer to v.
func ptr[T any](v T) *T { return &v }

// validVMISpec returns a complete, defaulted VMI spec that passes validation: a container disk and
// a cloud-init disk, and the pod network through masquerade.
func validVMISpec() core.VirtualMachineInstanceSpec {
	return core.VirtualMachineInstanceSpec{
		Domain: core.DomainSpec{
			Resources: core.ResourceRequirements{
				Requests: core.ResourceList{core.ResourceMemory: q("128Mi"), core.ResourceCPU: q("1")},
			},
			CPU:      &core.CPU{Sockets: 1, Cores: 1, Threads: 1},
			Memory:   &core.Memory{Guest: qp("128Mi")},
			Machine:  &core.Machine{Type: "q35"},
			Firmware: &core.Firmware{UUID: "5d307ca9-b3ef-428c-8861-06e72d69f223"},
			Devices: core.Devices{
				Disks: []core.Disk{
					{Name: "rootdisk", DiskDevice: core.DiskDevice{Disk: &core.DiskTarget{Bus: core.DiskBusVirtio}}},
					{Name: "cloudinit", DiskDevice: core.DiskDevice{Disk: &core.DiskTarget{Bus: core.DiskBusSATA}}},
				},
				Interfaces: []core.Interface{{
					Name:                   "default",
					InterfaceBindingMethod: core.InterfaceBindingMethod{Masquerade: &core.InterfaceMasquerade{}},
				}},
			},
		},
		Volumes: []core.Volume{
			{Name: "rootdisk", VolumeSource: core.VolumeSource{ContainerDisk: &core.ContainerDiskSource{
				Image: "quay.io/containerdisks/fedora:41", ImagePullPolicy: core.PullIfNotPresent}}},
			{Name: "cloudinit", VolumeSource: core.VolumeSource{CloudInitNoCloud: &core.CloudInitNoCloudSource{
				UserData: "#cloud-config\npassword: fedora\n"}}},
		},
		Networks:                      []core.Network{{Name: "default", NetworkSource: core.NetworkSource{Pod: &core.PodNetwork{}}}},
		TerminationGracePeriodSeconds: ptr(int64(30)),
	}
}

// validVMI returns a VMI with validVMISpec.
func validVMI() *core.VirtualMachineInstance {
	return &core.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "testvmi", Namespace: "default"},
		Spec:       validVMISpec(),
	}
}

// specCase is a table case that changes a valid VMI spec and expects errors.
type specCase struct {
	name   string
	mutate func(s *core.VirtualMachineInstanceSpec)
	want   []fe
}

// runSpecCases validates validVMI changed by each case with ValidateVirtualMachineInstance.
func runSpecCases(t *testing.T, cases []specCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vmi := validVMI()
			tc.mutate(&vmi.Spec)
			expectErrors(t, ValidateVirtualMachineInstance(vmi), tc.want...)
		})
	}
}
