package guestinfo

import (
	"encoding/json"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/testsupport/libvmi"
)

// TestAnswer: each subresource answers with KubeVirt's type, lists never null.
func TestAnswer(t *testing.T) {
	info := &v1.VirtualMachineInstanceGuestAgentInfo{Hostname: "tiny",
		UserList: []v1.VirtualMachineInstanceGuestOSUser{{UserName: "root"}}}
	for name, want := range map[string][]string{
		GuestOSInfo:    {`"kind":"VirtualMachineInstanceGuestAgentInfo"`, `"apiVersion":"kubevirt.io/v1"`, `"hostname":"tiny"`},
		UserList:       {`"kind":"VirtualMachineInstanceGuestOSUserList"`, `"items":[{"userName":"root"}]`},
		FileSystemList: {`"kind":"VirtualMachineInstanceFileSystemList"`, `"items":[]`},
	} {
		b, err := json.Marshal(Answer(name, info))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s answers %s, want it to contain %s", name, b, w)
			}
		}
	}
}

// TestAgentReachable: KubeVirt's 409s for a VMI that does not run or has no agent.
func TestAgentReachable(t *testing.T) {
	connected := libvmi.New(libvmi.WithName("demo"), libvmi.InPhase(v1.Running))
	connected.Status.Conditions = []v1.VirtualMachineInstanceCondition{{Type: v1.VirtualMachineInstanceAgentConnected, Status: v1.ConditionTrue}}
	if err := agentReachable(connected); err != nil {
		t.Errorf("a running VMI with its agent: %v", err)
	}
	for vmi, want := range map[*v1.VirtualMachineInstance]string{
		libvmi.New(libvmi.WithName("demo"), libvmi.InPhase(v1.Running)):    "VMI does not have guest agent connected",
		libvmi.New(libvmi.WithName("demo"), libvmi.InPhase(v1.Scheduling)): "VMI is not running",
	} {
		if err := agentReachable(vmi); !apierrors.IsConflict(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("phase %s: %v, want a 409 saying %q", vmi.Status.Phase, err, want)
		}
	}
}
