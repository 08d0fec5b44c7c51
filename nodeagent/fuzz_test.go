package nodeagent

import (
	"encoding/json"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/apis/core/validation"
	"github.com/vireo-dev/vireo/launcher/protocol"
)

// FuzzLauncherStatus feeds the node agent arbitrary domain statuses, as a launcher (which runs in
// the tenant's Pod, so is not trusted) could send them: the VMI status the node agent computes
// never panics, never moves a VMI backwards (Scheduled to Running to Succeeded or Failed), and
// always passes the API server's status validation, so a hostile launcher cannot wedge its VMI's
// status writes.
func FuzzLauncherStatus(f *testing.F) {
	for _, dom := range []*protocol.DomainStatus{
		domain(protocol.DomainRunning, ""), domain(protocol.DomainPaused, protocol.PausedByUser), domain(protocol.DomainSucceeded, "Shutdown"),
		domain(protocol.DomainFailed, "QEMUCrashed"), domain(protocol.DomainMigrated, ""),
		{Phase: protocol.DomainRunning, Migration: &protocol.MigrationStatus{UID: "m1", Phase: protocol.MigrationRunning}, Frozen: true,
			AccessCredentials: &protocol.CredentialsStatus{Message: "x"}, GuestOS: &v1.VirtualMachineInstanceGuestOSInfo{Name: "linux"}},
	} {
		b, err := json.Marshal(dom)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"phase":"Running","interfaces":[{"name":"","mac":"not a mac"},{"name":"default"},{"name":"default"}]}`))
	order := []v1.VirtualMachineInstancePhase{v1.Scheduled, v1.Running, v1.Succeeded}
	now := metav1.Now()
	f.Fuzz(func(t *testing.T, data []byte) {
		var dom protocol.DomainStatus
		if json.Unmarshal(data, &dom) != nil {
			return
		}
		for _, from := range []v1.VirtualMachineInstancePhase{v1.Scheduled, v1.Running} {
			vmi := scheduledVMI(func(vmi *v1.VirtualMachineInstance) { vmi.Status.Phase = from })
			st := nextStatus(vmi, observation{pod: readyPod(nil), domain: &dom}, now)
			rank := func(p v1.VirtualMachineInstancePhase) int {
				if p == v1.Failed {
					p = v1.Succeeded
				}
				return slices.Index(order, p)
			}
			if rank(st.Phase) < rank(from) {
				t.Fatalf("from %s, %s moved the VMI back to %s", from, data, st.Phase)
			}
			next := vmi.DeepCopy()
			next.Status = st
			if errs := validation.ValidateVirtualMachineInstanceStatusUpdate(next, vmi); len(errs) > 0 {
				t.Fatalf("from %s, %s gave a status the API server refuses: %v", from, data, errs)
			}
		}
	})
}
