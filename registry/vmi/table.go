package vmi

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/registry/storeutil"
)

// table prints KubeVirt's VMI columns: AGE PHASE IP NODENAME READY, and with -o wide
// LIVE-MIGRATABLE PAUSED.
var table = storeutil.Table[*v1.VirtualMachineInstance]{
	Columns: []metav1.TableColumnDefinition{
		storeutil.AgeColumn,
		storeutil.Column("Phase", "Lifecycle phase of the instance.", 0),
		storeutil.Column("IP", "IP address of the first interface.", 0),
		storeutil.Column("NodeName", "Node the instance runs on.", 0),
		storeutil.Column("Ready", "Status of the Ready condition.", 0),
		storeutil.Column("Live-Migratable", "Status of the LiveMigratable condition.", 1),
		storeutil.Column("Paused", "Status of the Paused condition.", 1),
	},
	Cells: func(o *v1.VirtualMachineInstance, age string) []any {
		ip := ""
		if len(o.Status.Interfaces) > 0 {
			ip = o.Status.Interfaces[0].IP
		}
		return []any{
			age,
			storeutil.OrNil(string(o.Status.Phase)),
			storeutil.OrNil(ip),
			storeutil.OrNil(o.Status.NodeName),
			storeutil.OrNil(conditionStatus(o, v1.VirtualMachineInstanceReady)),
			storeutil.OrNil(conditionStatus(o, v1.VirtualMachineInstanceIsMigratable)),
			storeutil.OrNil(conditionStatus(o, v1.VirtualMachineInstancePaused)),
		}
	},
}

func conditionStatus(o *v1.VirtualMachineInstance, t v1.VirtualMachineInstanceConditionType) string {
	for _, c := range o.Status.Conditions {
		if c.Type == t {
			return string(c.Status)
		}
	}
	return ""
}
