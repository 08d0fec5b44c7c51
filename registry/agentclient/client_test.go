package agentclient

import (
	"net/url"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

func agentPod(name, node, ip string, ready bool) *corev1.Pod {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "vireo-system", Name: name}, Spec: corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{PodIP: ip, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}}}
}

// TestLocationPicksTheReadyAgentOfTheNode: the URL is the Pod IP of the Ready node agent on the
// VMI's node, with the fixed port; other nodes' agents and agents not Ready are never chosen.
func TestLocationPicksTheReadyAgentOfTheNode(t *testing.T) {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, p := range []*corev1.Pod{agentPod("a", "node-a", "10.0.0.1", true), agentPod("b-old", "node-b", "10.0.1.1", false),
		agentPod("b", "node-b", "10.0.1.2", true), agentPod("c", "node-c", "10.0.2.1", false)} {
		_ = idx.Add(p)
	}
	o := NewOptions()
	c := &Client{opts: *o, pods: corelisters.NewPodLister(idx), synced: func() bool { return true }}
	u, err := c.Location("node-b", "/v1/namespaces/ns/virtualmachineinstances/vm/console", url.Values{"preserveSession": {"true"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := u.String(); got != "https://10.0.1.2:8186/v1/namespaces/ns/virtualmachineinstances/vm/console?preserveSession=true" {
		t.Errorf("location %s", got)
	}
	for _, node := range []string{"node-c", "node-z", ""} {
		if _, err := c.Location(node, "/x", nil); err == nil {
			t.Errorf("node %q: a location without a ready agent", node)
		}
	}
	var none *Client
	if _, err := none.Location("node-a", "/x", nil); err == nil || !strings.Contains(err.Error(), "--nodeagent-client-cert-file") {
		t.Errorf("without a client certificate: %v", err)
	}
}
