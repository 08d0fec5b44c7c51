package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/generated/clientset/versioned"
)

// autoUpdateSpec is kube-apiserver's annotation on its suggested priority-and-fairness objects:
// "false" keeps it from putting back the spec an administrator changed.
const autoUpdateSpec = "apf.kubernetes.io/autoupdate-spec"

// TestStreamsHoldTheirOwnSeats: open consoles and VNC sessions of an ordinary user hold seats of
// Vireo's own priority level (artifacts/base/flowcontrol.yaml), not of global-default, where the
// same user's other requests go. With global-default cut to fewer seats than there are open
// sessions, every session still opens and the user's ordinary requests keep succeeding while
// they stay open. Without Vireo's FlowSchema the sessions would fill global-default: the last
// ones and every ordinary request would wait in its queue until kube-apiserver rejects them.
func TestStreamsHoldTheirOwnSeats(t *testing.T) {
	ns := namespace(t)
	names := []string{"tiny", "tiny-b"}
	applyExample(t, ns, "vmi-tiny.yaml")
	applyExample(t, ns, "vmi-tiny.yaml", func(m string) string {
		return strings.Replace(m, "metadata:\n  name: tiny", "metadata:\n  name: tiny-b", 1)
	})
	for _, name := range names {
		waitPhase(t, ns, name, v1.Running, 120*time.Second)
	}
	bind(t, ns, "streamer", "edit")
	user, err := cluster.UserConfig("streamer", nil)
	if err != nil {
		t.Fatal(err)
	}
	user.Timeout = 10 * time.Second
	client, err := versioned.NewForConfig(user)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the user may list VMIs", func() error {
		_, err := client.KubevirtV1().VirtualMachineInstances(ns).List(t.Context(), metav1.ListOptions{})
		return err
	})

	seats := shrinkGlobalDefault(t)
	var sessions []*wsStream
	for _, name := range names {
		for _, kind := range []string{"console", "vnc"} {
			s, _, err := dialStream(t, user, streamPath("subresources.kubevirt.io", ns, name, kind))
			if err != nil {
				t.Fatalf("session %d (%s of %s) with global-default at %d seats: %v", len(sessions)+1, kind, name, seats, err)
			}
			if kind == "vnc" {
				s.waitFor(t, "RFB 003.008\n", 30*time.Second)
			}
			sessions = append(sessions, s)
		}
	}
	if len(sessions) <= seats {
		t.Fatalf("%d sessions open, global-default has %d seats: the test proves nothing", len(sessions), seats)
	}
	if n := executingRequests(t, "vireo-streams"); n < len(sessions) {
		t.Errorf("priority level vireo-streams executes %d requests with %d sessions open", n, len(sessions))
	}
	for i := range 10 {
		if _, err := client.KubevirtV1().VirtualMachineInstances(ns).List(t.Context(), metav1.ListOptions{}); err != nil {
			t.Fatalf("ordinary request %d with %d sessions open: %v", i+1, len(sessions), err)
		}
		if _, err := client.KubevirtV1().VirtualMachineInstances(ns).Get(t.Context(), names[i%2], metav1.GetOptions{}); err != nil {
			t.Fatalf("ordinary request %d with %d sessions open: %v", i+1, len(sessions), err)
		}
	}
	for i, s := range sessions {
		select {
		case <-s.done:
			t.Errorf("session %d ended while the ordinary requests ran: %v", i+1, s.ended())
		default:
		}
	}
}

// shrinkGlobalDefault cuts priority level global-default to its fewest seats (one share, no
// lending, no borrowing) until the test ends and returns the seats it has then.
func shrinkGlobalDefault(t *testing.T) int {
	t.Helper()
	plcs := kube.FlowcontrolV1().PriorityLevelConfigurations()
	orig, err := plcs.Get(t.Context(), "global-default", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := plcs.Get(context.Background(), "global-default", metav1.GetOptions{})
			if err != nil {
				return err
			}
			cur.Annotations, cur.Spec = orig.Annotations, orig.Spec
			_, err = plcs.Update(context.Background(), cur, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Errorf("restoring priority level global-default: %v", err)
		}
	})
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"false"}},"spec":{"limited":{"nominalConcurrencyShares":1,"lendablePercent":0,"borrowingLimitPercent":0}}}`, autoUpdateSpec)
	if _, err := plcs.Patch(t.Context(), "global-default", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	var seats int
	err = wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		seats = limitSeats(t, "global-default")
		return seats > 0 && seats <= 5, nil
	})
	if err != nil {
		t.Fatalf("global-default still has %d seats after cutting its shares to 1", seats)
	}
	t.Logf("global-default cut to %d seats", seats)
	return seats
}

// limitSeats is the current seat limit of a priority level, from kube-apiserver's metrics.
func limitSeats(t *testing.T, level string) int {
	t.Helper()
	body, err := kube.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(t.Context())
	if err != nil {
		t.Fatalf("kube-apiserver's metrics: %v", err)
	}
	prefix := `apiserver_flowcontrol_current_limit_seats{priority_level="` + level + `"}`
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), prefix+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatalf("metric line %q: %v", sc.Text(), err)
			}
			return int(f)
		}
	}
	t.Fatalf("kube-apiserver's metrics have no %s", prefix)
	return 0
}
