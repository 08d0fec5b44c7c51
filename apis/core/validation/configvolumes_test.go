package validation

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

func TestConfigVolumeValidation(t *testing.T) {
	v2 := volumesPath + "[2]"
	labels := v1.DownwardAPIVolumeFile{Path: "labels", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels"}}
	downward := func(files ...v1.DownwardAPIVolumeFile) func(s *v1.VirtualMachineInstanceSpec) {
		return addVolume("facts", v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{Fields: files}})
	}
	runSpecCases(t, []specCase{
		{name: "configMap", mutate: addVolume("cfg", v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
			LocalObjectReference: v1.LocalObjectReference{Name: "app-config"}, Optional: ptr.To(true), VolumeLabel: "OEMDRV"}})},
		{name: "configMap without name", mutate: addVolume("cfg", v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{}}),
			want: []fe{{required, v2 + ".configMap.name"}}},
		{name: "secret", mutate: addVolume("sec", v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "creds"}})},
		{name: "secret bad name", mutate: addVolume("sec", v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "Creds_1"}}),
			want: []fe{{invalid, v2 + ".secret.secretName"}}},
		{name: "label too long", mutate: addVolume("sec", v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "creds", VolumeLabel: strings.Repeat("L", 33)}}),
			want: []fe{{tooLong, v2 + ".secret.volumeLabel"}}},
		{name: "label not ASCII", mutate: addVolume("sec", v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "creds", VolumeLabel: "données"}}),
			want: []fe{{invalid, v2 + ".secret.volumeLabel"}}},
		{name: "serviceAccount", mutate: addVolume("sa", v1.VolumeSource{ServiceAccount: &v1.ServiceAccountVolumeSource{ServiceAccountName: "default"}})},
		{name: "serviceAccount without name", mutate: addVolume("sa", v1.VolumeSource{ServiceAccount: &v1.ServiceAccountVolumeSource{}}),
			want: []fe{{required, v2 + ".serviceAccount.serviceAccountName"}}},
		{name: "two serviceAccounts", mutate: func(s *v1.VirtualMachineInstanceSpec) {
			addVolume("sa", v1.VolumeSource{ServiceAccount: &v1.ServiceAccountVolumeSource{ServiceAccountName: "a"}})(s)
			addVolume("sb", v1.VolumeSource{ServiceAccount: &v1.ServiceAccountVolumeSource{ServiceAccountName: "b"}})(s)
		}, want: []fe{{invalid, volumesPath + "[3].serviceAccount"}}},
		{name: "configMap and secret", mutate: addVolume("two", v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
			LocalObjectReference: v1.LocalObjectReference{Name: "a"}}, Secret: &v1.SecretVolumeSource{SecretName: "b"}}),
			want: []fe{{invalid, v2}}},
		{name: "downwardAPI", mutate: downward(labels,
			v1.DownwardAPIVolumeFile{Path: "meta/app", FieldRef: &v1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.labels['app']"}},
			v1.DownwardAPIVolumeFile{Path: "memory", Mode: ptr.To[int32](0o400), ResourceFieldRef: &v1.ResourceFieldSelector{
				ContainerName: "compute", Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}})},
		{name: "downwardAPI no fields", mutate: downward(), want: []fe{{required, v2 + ".downwardAPI.fields"}}},
		{name: "downwardAPI bad paths", mutate: downward(
			v1.DownwardAPIVolumeFile{Path: "/etc/labels", FieldRef: labels.FieldRef},
			v1.DownwardAPIVolumeFile{Path: "a/../../b", FieldRef: labels.FieldRef},
			v1.DownwardAPIVolumeFile{Path: "", FieldRef: labels.FieldRef},
			v1.DownwardAPIVolumeFile{Path: "..data", FieldRef: labels.FieldRef}),
			want: []fe{{invalid, v2 + ".downwardAPI.fields[0].path"}, {invalid, v2 + ".downwardAPI.fields[1].path"},
				{required, v2 + ".downwardAPI.fields[2].path"}, {invalid, v2 + ".downwardAPI.fields[3].path"}}},
		{name: "downwardAPI duplicate path", mutate: downward(labels, labels),
			want: []fe{{duplicate, v2 + ".downwardAPI.fields[1].path"}}},
		{name: "downwardAPI unknown field", mutate: downward(v1.DownwardAPIVolumeFile{Path: "ip", FieldRef: &v1.ObjectFieldSelector{FieldPath: "status.podIP"}}),
			want: []fe{{notSupported, v2 + ".downwardAPI.fields[0].fieldRef.fieldPath"}}},
		{name: "downwardAPI both refs", mutate: downward(v1.DownwardAPIVolumeFile{Path: "x", FieldRef: labels.FieldRef,
			ResourceFieldRef: &v1.ResourceFieldSelector{Resource: "limits.cpu"}}),
			want: []fe{{invalid, v2 + ".downwardAPI.fields[0]"}}},
		{name: "downwardAPI no ref", mutate: downward(v1.DownwardAPIVolumeFile{Path: "x"}),
			want: []fe{{required, v2 + ".downwardAPI.fields[0]"}}},
		{name: "downwardAPI other container", mutate: downward(v1.DownwardAPIVolumeFile{Path: "x",
			ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "sidecar", Resource: "limits.cpu"}}),
			want: []fe{{notSupported, v2 + ".downwardAPI.fields[0].resourceFieldRef.containerName"}}},
		{name: "downwardAPI unknown resource", mutate: downward(v1.DownwardAPIVolumeFile{Path: "x",
			ResourceFieldRef: &v1.ResourceFieldSelector{Resource: "limits.gpu"}}),
			want: []fe{{notSupported, v2 + ".downwardAPI.fields[0].resourceFieldRef.resource"}}},
		{name: "downwardAPI bad mode", mutate: downward(v1.DownwardAPIVolumeFile{Path: "x", FieldRef: labels.FieldRef, Mode: ptr.To[int32](0o1777)}),
			want: []fe{{invalid, v2 + ".downwardAPI.fields[0].mode"}}},
	})
}
