package podnet

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/util/wait"
)

const testCIDR = "10.244.7.0/24"

// TestInNodeNetns runs inside the node namespace that TestPodNetwork made; its subtests share
// the Pods they set up and run in order.
func TestInNodeNetns(t *testing.T) {
	nodeName, stateDir := os.Getenv(envNode), os.Getenv(envState)
	if nodeName == "" {
		t.Skip("run by TestPodNetwork inside a node network namespace")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := Config{NodeName: nodeName, PodCIDR: testCIDR, Prefix: testPrefix, StateDir: stateDir}
	n, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	podA := PodRef{Namespace: "default", Name: "a", UID: uuid.NewString()}
	podB := PodRef{Namespace: "default", Name: "b", UID: uuid.NewString()}
	t.Cleanup(func() {
		for _, p := range []PodRef{podA, podB} {
			if err := n.Teardown(context.Background(), p); err != nil {
				t.Error(err)
			}
		}
	})
	var a, b Attachment
	outer := t // owns the listeners, which later subtests use too

	mustRun(t, "two Pods get distinct addresses from the Pod CIDR", func(t *testing.T) {
		a = setup(ctx, t, n, podA)
		b = setup(ctx, t, n, podB)
		_, subnet, _ := net.ParseCIDR(testCIDR)
		for _, att := range []Attachment{a, b} {
			if !subnet.Contains(att.IP) || att.IP.Equal(net.ParseIP("10.244.7.1")) {
				t.Errorf("address %s is not a Pod address of %s", att.IP, testCIDR)
			}
			if !isNetns(att.NetnsPath) || att.NetnsPath != filepath.Join(netnsDir, att.Netns) {
				t.Errorf("attachment %+v does not name a mounted network namespace", att)
			}
		}
		if a.IP.Equal(b.IP) {
			t.Errorf("both Pods got %s", a.IP)
		}
		if err := runIP(ctx, "link", "show", "cni0"); err != nil {
			t.Errorf("the bridge is not in the node namespace: %v", err)
		}
	})

	mustRun(t, "unprivileged ports start at 0 in a Pod namespace", func(t *testing.T) {
		var got []byte
		err := inNetns(a.NetnsPath, func() (err error) {
			got, err = os.ReadFile("/proc/sys/net/ipv4/ip_unprivileged_port_start")
			return err
		})
		if err != nil || strings.TrimSpace(string(got)) != "0" {
			t.Errorf("ip_unprivileged_port_start in %s = %q, %v; want 0", a.Netns, got, err)
		}
	})

	mustRun(t, "Pods listen on the same port as non-root and reach each other over TCP", func(t *testing.T) {
		startListener(t, outer, a.NetnsPath, ":80", "pod-a")
		startListener(t, outer, b.NetnsPath, ":80", "pod-b")
		expectReply(ctx, t, a.NetnsPath, net.JoinHostPort(b.IP.String(), "80"), "pod-b")
		expectReply(ctx, t, b.NetnsPath, net.JoinHostPort(a.IP.String(), "80"), "pod-a")
	})

	mustRun(t, "Setup again adopts the namespace and address, also after a node restart", func(t *testing.T) {
		if again := setup(ctx, t, n, podA); !again.IP.Equal(a.IP) || again.NetnsPath != a.NetnsPath {
			t.Errorf("second Setup = %+v, want %+v", again, a)
		}
		restarted, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if again := setup(ctx, t, restarted, podB); !again.IP.Equal(b.IP) {
			t.Errorf("Setup by a restarted node = %+v, want %+v", again, b)
		}
		expectReply(ctx, t, a.NetnsPath, net.JoinHostPort(b.IP.String(), "80"), "pod-b")
	})

	mustRun(t, "List reports the Pods with their names", func(t *testing.T) {
		got, err := n.List()
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []PodRef{podA, podB} {
			if !slices.Contains(got, p) {
				t.Errorf("List() = %v, missing %v", got, p)
			}
		}
	})

	mustRun(t, "Teardown frees the address and deletes the namespace, idempotently", func(t *testing.T) {
		for range 2 {
			if err := n.Teardown(ctx, podA); err != nil {
				t.Fatal(err)
			}
		}
		expectReleased(t, n, stateDir, podA, a)
		if err := n.Teardown(ctx, PodRef{Namespace: "default", Name: "unknown", UID: uuid.NewString()}); err != nil {
			t.Errorf("Teardown of an unknown Pod: %v", err)
		}
	})

	mustRun(t, "Teardown frees the address of a Pod whose namespace vanished", func(t *testing.T) {
		podC := PodRef{Namespace: "other", Name: "c", UID: uuid.NewString()}
		c := setup(ctx, t, n, podC)
		if err := deleteNetns(ctx, c.Netns); err != nil {
			t.Fatal(err)
		}
		if got, _ := n.List(); !slices.Contains(got, podC) {
			t.Errorf("List() = %v, missing %v whose namespace is gone but address is not", got, podC)
		}
		if err := n.Teardown(ctx, podC); err != nil {
			t.Fatal(err)
		}
		expectReleased(t, n, stateDir, podC, c)
	})

	mustRun(t, "Pods set up and torn down at once get distinct addresses and leave nothing", func(t *testing.T) {
		pods := make([]PodRef, 8)
		atts := make([]Attachment, len(pods))
		errs := make([]error, len(pods))
		var wg sync.WaitGroup
		for i := range pods {
			pods[i] = PodRef{Namespace: "many", Name: fmt.Sprintf("p%d", i), UID: uuid.NewString()}
			wg.Go(func() { atts[i], errs[i] = n.Setup(ctx, pods[i]) })
		}
		wg.Wait()
		seen := map[string]bool{}
		for i, err := range errs {
			if err != nil {
				t.Fatalf("Setup of %v: %v", pods[i], err)
			}
			if seen[atts[i].IP.String()] {
				t.Errorf("address %s given twice", atts[i].IP)
			}
			seen[atts[i].IP.String()] = true
		}
		expectReply(ctx, t, atts[0].NetnsPath, net.JoinHostPort(b.IP.String(), "80"), "pod-b")
		for i := range pods {
			wg.Go(func() { errs[i] = n.Teardown(ctx, pods[i]) })
		}
		wg.Wait()
		for i := range pods {
			if errs[i] != nil {
				t.Errorf("Teardown of %v: %v", pods[i], errs[i])
			}
			expectReleased(t, n, stateDir, pods[i], atts[i])
		}
	})

	mustRun(t, "Setup completes a namespace left without an attachment", func(t *testing.T) {
		podD := PodRef{Namespace: "other", Name: "d", UID: uuid.NewString()}
		if err := addNetns(ctx, n.NetnsName(podD.UID)); err != nil { // as if the node died before CNI ADD
			t.Fatal(err)
		}
		d := setup(ctx, t, n, podD)
		startListener(t, t, d.NetnsPath, ":8080", "pod-d")
		expectReply(ctx, t, b.NetnsPath, net.JoinHostPort(d.IP.String(), "8080"), "pod-d")
		if err := n.Teardown(ctx, podD); err != nil {
			t.Fatal(err)
		}
		expectReleased(t, n, stateDir, podD, d)
	})
}

// mustRun runs a subtest and stops the test if it failed, as later ones build on it.
func mustRun(t *testing.T, name string, f func(t *testing.T)) {
	t.Helper()
	if !t.Run(name, f) {
		t.FailNow()
	}
}

func setup(ctx context.Context, t *testing.T, n *Network, pod PodRef) Attachment {
	t.Helper()
	att, err := n.Setup(ctx, pod)
	if err != nil {
		t.Fatal(err)
	}
	return att
}

// expectReply polls until a connection from netnsPath to addr returns want.
func expectReply(ctx context.Context, t *testing.T, netnsPath, addr, want string) {
	t.Helper()
	var got string
	var lastErr error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		got, lastErr = dialFrom(ctx, netnsPath, addr)
		return lastErr == nil && got == want, nil
	})
	if err != nil {
		t.Fatalf("from %s to %s: got %q, %v; want %q", filepath.Base(netnsPath), addr, got, lastErr, want)
	}
}

// expectReleased checks that the Pod's namespace, allocation and cache entry are gone.
func expectReleased(t *testing.T, n *Network, stateDir string, pod PodRef, att Attachment) {
	t.Helper()
	if _, err := os.Lstat(att.NetnsPath); !os.IsNotExist(err) {
		t.Errorf("namespace %s still exists after Teardown (%v)", att.NetnsPath, err)
	}
	if _, err := os.Stat(filepath.Join(stateDir, "ipam", networkName, att.IP.String())); !os.IsNotExist(err) {
		t.Errorf("host-local still has %s allocated after Teardown (%v)", att.IP, err)
	}
	got, err := n.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range got {
		if p.UID == pod.UID {
			t.Errorf("List() still reports %v after Teardown", p)
		}
	}
}
