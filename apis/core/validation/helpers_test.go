package validation

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
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

// validVMISpec returns a complete, defaulted VMI spec that passes validation: a container disk and
// a cloud-init disk, and the pod network through masquerade.
func validVMISpec() v1.VirtualMachineInstanceSpec {
	return v1.VirtualMachineInstanceSpec{
		Domain: v1.DomainSpec{
			Resources: v1.ResourceRequirements{
				Requests: v1.ResourceList{v1.ResourceMemory: q("128Mi"), v1.ResourceCPU: q("1")},
			},
			CPU:      &v1.CPU{Sockets: 1, Cores: 1, Threads: 1},
			Memory:   &v1.Memory{Guest: qp("128Mi")},
			Machine:  &v1.Machine{Type: "q35"},
			Firmware: &v1.Firmware{UUID: "5d307ca9-b3ef-428c-8861-06e72d69f223"},
			Devices: v1.Devices{
				Disks: []v1.Disk{
					{Name: "rootdisk", DiskDevice: v1.DiskDevice{Disk: &v1.DiskTarget{Bus: v1.DiskBusVirtio}}},
					{Name: "cloudinit", DiskDevice: v1.DiskDevice{Disk: &v1.DiskTarget{Bus: v1.DiskBusSATA}}},
				},
				Interfaces: []v1.Interface{{
					Name:                   "default",
					InterfaceBindingMethod: v1.InterfaceBindingMethod{Masquerade: &v1.InterfaceMasquerade{}},
				}},
			},
		},
		Volumes: []v1.Volume{
			{Name: "rootdisk", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{
				Image: "quay.io/containerdisks/fedora:41", ImagePullPolicy: v1.PullIfNotPresent}}},
			{Name: "cloudinit", VolumeSource: v1.VolumeSource{CloudInitNoCloud: &v1.CloudInitNoCloudSource{
				UserData: "#cloud-config\npassword: fedora\n"}}},
		},
		Networks:                      []v1.Network{{Name: "default", NetworkSource: v1.NetworkSource{Pod: &v1.PodNetwork{}}}},
		TerminationGracePeriodSeconds: ptr.To(int64(30)),
	}
}

// validVMI returns a VMI with validVMISpec.
func validVMI() *v1.VirtualMachineInstance {
	return &v1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "testvmi", Namespace: "default"},
		Spec:       validVMISpec(),
	}
}

// specCase is a table case that changes a valid VMI spec and expects errors.
type specCase struct {
	name   string
	mutate func(s *v1.VirtualMachineInstanceSpec)
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
