package apis

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	serializerjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
)

// alwaysSent is a field that KubeVirt's or CDI's Go types serialize even when it holds its zero
// value: it has no omitempty, or it is a struct (which encoding/json never omits). KubeVirt's
// clients send such fields on every create and update, so Vireo's types must know each one
// where its parent can appear, or strict decoding (kubectl, client-go with strict field
// validation) reports an unknown field.
type alwaysSent struct {
	// kind is the top-level kind the field was found under.
	kind string
	// path is the field's JSON path; "[0]" stands for an item of a list.
	path string
	// zero is the value KubeVirt's client sends: "", 0, nil (null) or {} (an empty struct).
	zero any
}

// emptyStruct is how encoding/json writes a struct whose fields are all omitted.
var emptyStruct = map[string]any{}

// kubeVirtAlwaysSent lists, from KubeVirt's staging/src/kubevirt.io/api/core/v1/{types,schema}.go
// and CDI's core/v1beta1/types.go, every field sent at its zero value that sits in a struct
// Vireo supports. Fields inside structs Vireo does not implement (accessCredentials, inputs,
// watchdog, gpus, hostDevices, filesystems, multus, sendTo/receive, status.volumeStatus,
// volumeSnapshotStatuses, ...) are not listed: their parents are themselves unknown to Vireo.
var kubeVirtAlwaysSent = []alwaysSent{
	// VirtualMachineInstance: metadata and status are structs; so are the domain's resources,
	// devices and features.acpi, and the guest OS info; status.runtimeUser has no omitempty.
	{"VirtualMachineInstance", "metadata.creationTimestamp", nil},
	{"VirtualMachineInstance", "spec.domain.resources", emptyStruct},
	{"VirtualMachineInstance", "spec.domain.devices.disks[0].name", ""},
	{"VirtualMachineInstance", "spec.domain.devices.interfaces[0].name", ""},
	{"VirtualMachineInstance", "spec.domain.devices.interfaces[0].ports[0].port", 0},
	{"VirtualMachineInstance", "spec.domain.machine.type", ""},
	{"VirtualMachineInstance", "spec.domain.features.acpi", emptyStruct},
	{"VirtualMachineInstance", "spec.domain.firmware.kernelBoot.container.image", ""},
	{"VirtualMachineInstance", "spec.readinessProbe.httpGet.port", 0},
	{"VirtualMachineInstance", "spec.readinessProbe.httpGet.httpHeaders[0].name", ""},
	{"VirtualMachineInstance", "spec.readinessProbe.httpGet.httpHeaders[0].value", ""},
	{"VirtualMachineInstance", "spec.livenessProbe.tcpSocket.port", 0},
	{"VirtualMachineInstance", "spec.volumes[0].name", ""},
	{"VirtualMachineInstance", "spec.volumes[0].containerDisk.image", ""},
	{"VirtualMachineInstance", "spec.volumes[1].name", ""},
	{"VirtualMachineInstance", "spec.volumes[1].emptyDisk.capacity", "0"},
	{"VirtualMachineInstance", "spec.volumes[2].name", ""},
	{"VirtualMachineInstance", "spec.volumes[2].hostDisk.path", ""},
	{"VirtualMachineInstance", "spec.volumes[2].hostDisk.type", ""},
	{"VirtualMachineInstance", "spec.volumes[2].hostDisk.capacity", "0"},
	{"VirtualMachineInstance", "spec.volumes[3].name", ""},
	{"VirtualMachineInstance", "spec.volumes[3].persistentVolumeClaim.claimName", ""},
	{"VirtualMachineInstance", "spec.volumes[4].name", ""},
	{"VirtualMachineInstance", "spec.volumes[4].dataVolume.name", ""},
	{"VirtualMachineInstance", "spec.networks[0].name", ""},
	{"VirtualMachineInstance", "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms", nil},
	{"VirtualMachineInstance", "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight", 0},
	{"VirtualMachineInstance", "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].key", ""},
	{"VirtualMachineInstance", "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].operator", ""},
	{"VirtualMachineInstance", "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey", ""},
	{"VirtualMachineInstance", "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight", 0},
	{"VirtualMachineInstance", "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.topologyKey", ""},
	{"VirtualMachineInstance", "status.guestOSInfo", emptyStruct},
	{"VirtualMachineInstance", "status.runtimeUser", 0},
	{"VirtualMachineInstance", "status.conditions[0].type", ""},
	{"VirtualMachineInstance", "status.conditions[0].status", ""},
	{"VirtualMachineInstance", "status.conditions[0].lastProbeTime", nil},
	{"VirtualMachineInstance", "status.conditions[0].lastTransitionTime", nil},
	{"VirtualMachineInstance", "status.phaseTransitionTimestamps[0].phaseTransitionTimestamp", nil},

	// VirtualMachine: spec.template has no omitempty (null when unset, below it the same VMI
	// spec); dataVolumeTemplates carry metadata and spec; the status is a struct.
	{"VirtualMachine", "metadata.creationTimestamp", nil},
	{"VirtualMachine", "spec.template.metadata.creationTimestamp", nil},
	{"VirtualMachine", "spec.template.spec.domain.resources", emptyStruct},
	{"VirtualMachine", "spec.template.spec.domain.devices", emptyStruct},
	{"VirtualMachine", "spec.dataVolumeTemplates[0].metadata.creationTimestamp", nil},
	{"VirtualMachine", "spec.dataVolumeTemplates[0].spec.storage.resources", emptyStruct},
	{"VirtualMachine", "spec.dataVolumeTemplates[0].spec.source.http.url", ""},
	{"VirtualMachine", "status.conditions[0].type", ""},
	{"VirtualMachine", "status.conditions[0].status", ""},
	{"VirtualMachine", "status.conditions[0].lastProbeTime", nil},
	{"VirtualMachine", "status.conditions[0].lastTransitionTime", nil},
	{"VirtualMachine", "status.stateChangeRequests[0].action", ""},

	// VirtualMachineInstanceMigration: spec and status are structs.
	{"VirtualMachineInstanceMigration", "metadata.creationTimestamp", nil},
	{"VirtualMachineInstanceMigration", "spec", emptyStruct},
	{"VirtualMachineInstanceMigration", "status.conditions[0].type", ""},
	{"VirtualMachineInstanceMigration", "status.conditions[0].status", ""},
	{"VirtualMachineInstanceMigration", "status.conditions[0].lastProbeTime", nil},
	{"VirtualMachineInstanceMigration", "status.conditions[0].lastTransitionTime", nil},
	{"VirtualMachineInstanceMigration", "status.phaseTransitionTimestamps[0].phaseTransitionTimestamp", nil},

	// KubeVirt: spec, its configuration, the workload update strategy, two strategies Vireo does
	// not implement (accepted empty only), and the status are structs.
	{"KubeVirt", "metadata.creationTimestamp", nil},
	{"KubeVirt", "spec.configuration", emptyStruct},
	{"KubeVirt", "spec.workloadUpdateStrategy", emptyStruct},
	{"KubeVirt", "spec.certificateRotateStrategy", emptyStruct},
	{"KubeVirt", "spec.customizeComponents", emptyStruct},
	{"KubeVirt", "status.conditions[0].type", ""},
	{"KubeVirt", "status.conditions[0].status", ""},
	{"KubeVirt", "status.conditions[0].lastProbeTime", nil},
	{"KubeVirt", "status.conditions[0].lastTransitionTime", nil},

	// DataVolume (CDI): spec has no omitempty; pvc and storage carry a resources struct.
	{"DataVolume", "metadata.creationTimestamp", nil},
	{"DataVolume", "spec.pvc.resources", emptyStruct},
	{"DataVolume", "spec.storage.resources", emptyStruct},
	{"DataVolume", "spec.source.http.url", ""},
	{"DataVolume", "spec.source.pvc.namespace", ""},
	{"DataVolume", "spec.source.pvc.name", ""},
	{"DataVolume", "status.conditions[0].type", ""},
	{"DataVolume", "status.conditions[0].status", ""},
	{"DataVolume", "status.conditions[0].lastTransitionTime", nil},
	{"DataVolume", "status.conditions[0].lastHeartbeatTime", nil},
}

// apiVersions are the apiVersions of the kinds in kubeVirtAlwaysSent.
var apiVersions = map[string]string{
	"VirtualMachineInstance":          "kubevirt.io/v1",
	"VirtualMachine":                  "kubevirt.io/v1",
	"VirtualMachineInstanceMigration": "kubevirt.io/v1",
	"KubeVirt":                        "kubevirt.io/v1",
	"DataVolume":                      "cdi.kubevirt.io/v1beta1",
}

// setPath sets path (dot-separated, "[0]" for the first item of a list, also as the last part)
// to value in doc, creating the maps and one-item lists on the way.
func setPath(t *testing.T, doc map[string]any, path string, value any) {
	t.Helper()
	parts := strings.Split(path, ".")
	cur := doc
	for i, part := range parts {
		name, index, isList := strings.Cut(part, "[")
		last := i == len(parts)-1
		if !isList {
			if last {
				cur[name] = value
				return
			}
			next, ok := cur[name].(map[string]any)
			if !ok {
				next = map[string]any{}
				cur[name] = next
			}
			cur = next
			continue
		}
		n, err := strconv.Atoi(strings.TrimSuffix(index, "]"))
		if err != nil {
			t.Fatalf("bad path %q", path)
		}
		list, _ := cur[name].([]any)
		for len(list) <= n {
			list = append(list, map[string]any{})
		}
		cur[name] = list
		if last {
			list[n] = value
			return
		}
		cur = list[n].(map[string]any)
	}
}

// TestKubeVirtClientZeroValuesDecodeStrictly builds, for each kind, the JSON document KubeVirt's
// Go client sends with every always-serialized field at its zero value, and decodes it strictly
// into Vireo's types: no field may be unknown.
func TestKubeVirtClientZeroValuesDecodeStrictly(t *testing.T) {
	scheme := newScheme()
	strict := serializerjson.NewSerializerWithOptions(serializerjson.DefaultMetaFactory, scheme, scheme,
		serializerjson.SerializerOptions{Strict: true})
	docs := map[string]map[string]any{}
	for _, f := range kubeVirtAlwaysSent {
		doc, ok := docs[f.kind]
		if !ok {
			doc = map[string]any{"apiVersion": apiVersions[f.kind], "kind": f.kind, "metadata": map[string]any{"name": "zero"}}
			docs[f.kind] = doc
		}
		setPath(t, doc, f.path, f.zero)
	}
	// A VirtualMachine without a template sends "template": null.
	docs["VirtualMachine (no template)"] = map[string]any{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
		"metadata": map[string]any{"name": "zero", "creationTimestamp": nil}, "spec": map[string]any{"template": nil},
		"status": emptyStruct}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			data, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			obj, _, err := strict.Decode(data, nil, nil)
			if err != nil {
				t.Fatalf("strict decoding failed: %v\ndocument: %s", err, data)
			}
			if obj.GetObjectKind().GroupVersionKind().Kind != doc["kind"] {
				t.Errorf("decoded %T", obj)
			}
		})
	}
}
