package launcher

import (
	"context"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/controllers/launcherpod"
	"github.com/vireo-dev/vireo/internal/clusterconfig"
	"github.com/vireo-dev/vireo/launcher/domain"
	"github.com/vireo-dev/vireo/launcher/protocol"
)

const noKVM = "software emulation (TCG): cannot open /dev/kvm: no such file or directory"

func TestEmulationRefusal(t *testing.T) {
	cases := []struct {
		name string
		emu  domain.Emulation
		opts Options
		want []string // substrings of the refusal; nil for none
	}{
		{"KVM, emulation not allowed", domain.EmulationKVM, Options{}, nil},
		{"KVM, emulation allowed", domain.EmulationKVM, Options{UseEmulation: true}, nil},
		{"TCG, emulation allowed", domain.EmulationTCG, Options{UseEmulation: true, NodeName: "n1"}, nil},
		{"TCG, emulation not allowed", domain.EmulationTCG,
			Options{NodeName: "n1", UseEmulationSource: "KubeVirt vireo-system/kubevirt"},
			[]string{"KVM is not available on node n1 (cannot open /dev/kvm: no such file or directory) and " +
				"spec.configuration.developerConfiguration.useEmulation is false in KubeVirt vireo-system/kubevirt"}},
		{"TCG, no node or source given", domain.EmulationTCG, Options{},
			[]string{"KVM is not available on this node", "useEmulation is false in the cluster's settings"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := emulationRefusal(c.emu, noKVM, &c.opts)
			if c.want == nil {
				if got != "" {
					t.Fatalf("refused: %s", got)
				}
				return
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("refusal %q lacks %q", got, w)
				}
			}
		})
	}
}

// TestSyncRefusesEmulation checks a refused guest ends Failed with the refusal, for the node
// agent to put on the VMI, and is never started.
func TestSyncRefusesEmulation(t *testing.T) {
	o := &Options{UID: "uid-1", NodeName: "n1", UseEmulationSource: "KubeVirt vireo-system/kubevirt"}
	l := &launcher{opts: o, hub: newHub(), emulation: domain.EmulationTCG, refusal: emulationRefusal(domain.EmulationTCG, noKVM, o)}
	vmi := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{UID: "uid-1"}}
	if _, err := l.Sync(context.Background(), &protocol.SyncRequest{VMI: vmi}); err == nil || !strings.Contains(err.Error(), "useEmulation is false") {
		t.Fatalf("Sync: %v, want the refusal", err)
	}
	st := l.hub.get()
	if st.Phase != protocol.DomainFailed || st.Reason != v1.ReasonEmulationNotAllowed || st.Message != l.refusal {
		t.Errorf("status %+v, want Failed %s with the refusal", st, v1.ReasonEmulationNotAllowed)
	}
	// The node agent retries a failed handover: the answer stays the final status.
	if st, err := l.Sync(context.Background(), &protocol.SyncRequest{VMI: vmi}); err != nil || st.Phase != protocol.DomainFailed {
		t.Errorf("second Sync: %+v, %v", st, err)
	}
}

// TestLauncherPodArgumentsParse renders launcher Pods the way vireo-controller does and parses
// their arguments with the launcher's flags: the setting reaches the launcher as rendered.
func TestLauncherPodArgumentsParse(t *testing.T) {
	vmi := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "tiny", Namespace: "ns", UID: "uid-1"},
		Spec: v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Memory: &v1.Memory{Guest: new(resource.MustParse("64Mi"))}}}}
	for _, allowed := range []bool{false, true} {
		opts := launcherpod.Options{Image: "vireo-launcher",
			Emulation: func() clusterconfig.EmulationSetting {
				return clusterconfig.EmulationSetting{Allowed: allowed, Source: "KubeVirt vireo-system/kubevirt"}
			}}
		pod, err := launcherpod.Render(vmi, opts)
		if err != nil {
			t.Fatal(err)
		}
		o := NewOptions()
		fs := pflag.NewFlagSet("vireo-launcher", pflag.ContinueOnError)
		o.AddFlags(fs)
		if err := fs.Parse(pod.Spec.Containers[0].Args); err != nil {
			t.Fatalf("launcher flags refuse the Pod's arguments %q: %v", pod.Spec.Containers[0].Args, err)
		}
		if o.UseEmulation != allowed || o.UseEmulationSource != "KubeVirt vireo-system/kubevirt" || o.UID != "uid-1" {
			t.Errorf("parsed useEmulation %v source %q uid %q, want %v", o.UseEmulation, o.UseEmulationSource, o.UID, allowed)
		}
	}
	if !NewOptions().UseEmulation {
		t.Errorf("without --use-emulation the guest may not run under emulation; want it may, as before the setting")
	}
}
