package protocol

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// The compatibility rule (docs/design.md, "Upgrades"): a node agent of release N drives the
// launchers of release N-1 that still run guests started before the upgrade. So every message
// a version-1 peer sends must still decode, field for field, and every call a version-1
// launcher serves must still be the one the agent makes. testdata/v1/ holds what version 1
// sends; it is written once (-write-v1-messages, when the version was made) and never
// rewritten: a change that breaks these tests needs a new protocol Version.
var writeV1 = flag.Bool("write-v1-messages", false, "write testdata/v1 (only when protocol version 1 is made: never afterwards)")

// v1Messages are messages as version-1 peers send them, with every field set.
func v1Messages() map[string]any {
	at := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	end := at.Add(time.Minute)
	return map[string]any{
		"hello-request.json":  &HelloRequest{Versions: []uint32{1}},
		"hello-response.json": &HelloResponse{Version: 1, LauncherVersion: "v0.26.0", VMIUID: "7d3c0f4e-uid"},
		"sync-request.json": &SyncRequest{VMI: &v1.VirtualMachineInstance{
			TypeMeta:   metav1.TypeMeta{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachineInstance"},
			ObjectMeta: metav1.ObjectMeta{Name: "tiny", Namespace: "default", UID: "7d3c0f4e-uid"},
			Spec: v1.VirtualMachineInstanceSpec{Volumes: []v1.Volume{{Name: "root",
				VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "registry/tiny@sha256:0123"}}}}},
		}},
		"domain-status.json": &DomainStatus{Phase: DomainRunning, Reason: "Booted", Message: "the guest runs",
			Emulation: "tcg", EmulationReason: "no KVM", Interfaces: []Interface{{Name: "default", MAC: "02:00:00:00:00:01", IPs: []string{"10.0.0.5"}, GuestName: "eth0"}},
			Migration: &MigrationStatus{UID: "mig-uid", Phase: MigrationCompleted, Mode: ModePreCopy, Start: &at, End: &end, Failure: "none",
				AbortRequested: true, Aborted: true, DataTotal: 10, DataProcessed: 9, DataRemaining: 1, MemoryDirtyRate: 2, MemoryBps: 3,
				DowntimeMs: 4, ElapsedMs: 5, PostCopyUnavailable: "refused"},
			AgentConnected: true, AccessCredentials: &CredentialsStatus{Synced: true, Message: "applied"}, Terminated: true,
			GuestOS: &v1.VirtualMachineInstanceGuestOSInfo{Name: "Alpine"}, Frozen: true, Since: at},
		"migrate-request.json": &MigrateRequest{MigrationUID: "mig-uid", BandwidthMiB: 64, ProgressTimeout: 150 * time.Second,
			CompletionTimeoutPerGiB: 800 * time.Second, AllowAutoConverge: true, AllowPostCopy: true},
		"freeze-request.json":      &FreezeRequest{UnfreezeTimeout: 5 * time.Minute},
		"guest-probe-request.json": &GuestProbeRequest{Ping: true, Command: []string{"true"}, Timeout: time.Second},
	}
}

// v1Methods are the calls a version-1 launcher serves.
var v1Methods = []string{"Hello", "Sync", "Shutdown", "Stop", "Pause", "Unpause", "SoftReboot", "Reset", "GuestInfo",
	"Freeze", "Unfreeze", "GuestProbe", "PrepareTarget", "Migrate", "AbortMigration", "Events"}

func TestVersion1MessagesDecode(t *testing.T) {
	dir := filepath.Join("testdata", "v1")
	if *writeV1 {
		writeMessages(t, dir)
	}
	for name, msg := range v1Messages() {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%v (the version-1 messages are committed; see writeV1)", err)
		}
		// Every field a version-1 peer sends is still a field of this version...
		got := reflect.New(reflect.TypeOf(msg).Elem()).Interface()
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(got); err != nil {
			t.Errorf("%s: a version-1 message does not decode: %v", name, err)
			continue
		}
		// ...and means the same: encoding what was decoded gives every field back unchanged
		// (this version may add fields, which version-1 peers ignore).
		again, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		var want, have map[string]any
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(again, &have); err != nil {
			t.Fatal(err)
		}
		for _, diff := range missingFrom(want, have, "") {
			t.Errorf("%s: %s", name, diff)
		}
	}
}

// missingFrom lists what of the version-1 JSON value want is not the same in have, at any depth:
// fields added since (in have only) are allowed.
func missingFrom(want, have any, path string) []string {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s was an object in version 1, reads back as %v", orTop(path), have)}
		}
		var out []string
		for k, v := range w {
			out = append(out, missingFrom(v, h[k], path+"."+k)...)
		}
		return out
	case []any:
		h, ok := have.([]any)
		if !ok || len(h) != len(w) {
			return []string{fmt.Sprintf("%s was %v in version 1, reads back as %v", orTop(path), want, have)}
		}
		var out []string
		for i := range w {
			out = append(out, missingFrom(w[i], h[i], fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	}
	if !reflect.DeepEqual(want, have) {
		return []string{fmt.Sprintf("field %s was %v in version 1, reads back as %v", orTop(path), want, have)}
	}
	return nil
}

func orTop(path string) string {
	if path == "" {
		return "the message"
	}
	return path
}

func TestVersion1CallsAreServed(t *testing.T) {
	var served []string
	for _, m := range serviceDesc.Methods {
		served = append(served, m.MethodName)
	}
	for _, s := range serviceDesc.Streams {
		served = append(served, s.StreamName)
	}
	for _, m := range v1Methods {
		if !slices.Contains(served, m) {
			t.Errorf("call %s of protocol version 1 is no longer served: N-1 agents and launchers need it", m)
		}
	}
}

func writeMessages(t *testing.T, dir string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, msg := range v1Messages() {
		b, err := json.MarshalIndent(msg, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("wrote %s: commit them, and never rewrite them", strings.Join(slices.Sorted(maps.Keys(v1Messages())), ", "))
}
