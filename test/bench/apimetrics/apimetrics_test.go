package apimetrics

import "testing"

func TestParseRequests(t *testing.T) {
	data := []byte(`# HELP apiserver_request_total [STABLE] Counter of apiserver requests
# TYPE apiserver_request_total counter
apiserver_request_total{code="201",component="apiserver",dry_run="",group="kubevirt.io",resource="virtualmachineinstances",scope="resource",subresource="",verb="POST",version="v1"} 3
apiserver_request_total{code="200",component="apiserver",dry_run="",group="kubevirt.io",resource="virtualmachineinstances",scope="resource",subresource="status",verb="PUT",version="v1"} 10
apiserver_request_total{code="200",component="apiserver",dry_run="",group="kubevirt.io",resource="virtualmachineinstances",scope="resource",subresource="",verb="GET",version="v1"} 99
apiserver_request_total{code="200",component="apiserver",dry_run="",group="kubevirt.io",resource="virtualmachineinstancemigrations",scope="resource",subresource="",verb="POST",version="v1"} 4
apiserver_request_duration_seconds_count{resource="virtualmachineinstances",verb="POST"} 3
`)
	out := RequestCounts{}
	if err := ParseRequests(data, "vireo-apiserver", map[string]bool{"virtualmachineinstances": true}, out); err != nil {
		t.Fatal(err)
	}
	create := RequestKey{Server: "vireo-apiserver", Resource: "virtualmachineinstances", Verb: "create", Code: "201"}
	update := RequestKey{Server: "vireo-apiserver", Resource: "virtualmachineinstances", Subresource: "status", Verb: "update", Code: "200"}
	if len(out) != 2 || out[create] != 3 || out[update] != 10 {
		t.Errorf("ParseRequests = %v; want the create (3) and the status update (10) only", out)
	}
	if got, want := update.String(), "vireo-apiserver update virtualmachineinstances/status (200)"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	// A second exposition adds to the counts (the replicas of one server are summed).
	if err := ParseRequests(data, "vireo-apiserver", map[string]bool{"virtualmachineinstances": true}, out); err != nil {
		t.Fatal(err)
	}
	if out[create] != 6 {
		t.Errorf("after two expositions the create count is %v, want 6", out[create])
	}
	if err := ParseRequests([]byte(`apiserver_request_total{resource="virtualmachineinstances",verb="POST"} x`), "vireo-apiserver", map[string]bool{"virtualmachineinstances": true}, RequestCounts{}); err == nil {
		t.Error("a malformed value parsed")
	}
}
