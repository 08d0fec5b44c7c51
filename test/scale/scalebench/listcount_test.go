package main

import (
	"bytes"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/generated/clientset/versioned/scheme"
)

// TestCountPageReadsWhatTheSerializersWrite: the item count and continue token of lists as
// Vireo's serializers write them, in protobuf and JSON, with and without a token, and empty.
func TestCountPageReadsWhatTheSerializersWrite(t *testing.T) {
	for _, tc := range []struct {
		name  string
		items int
		cont  string
	}{{"three, a token", 3, "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ"}, {"two, the last page", 2, ""}, {"empty", 0, ""}} {
		list := &v1.VirtualMachineInstanceList{}
		list.Continue, list.ResourceVersion = tc.cont, "42"
		for i := range tc.items {
			list.Items = append(list.Items, *vireoVMI(i, 10))
		}
		for _, mediaType := range []string{runtime.ContentTypeProtobuf, runtime.ContentTypeJSON} {
			body := encodeAs(t, list, mediaType)
			items, cont, err := countPage(body, mediaType == runtime.ContentTypeProtobuf)
			if err != nil || items != tc.items || cont != tc.cont {
				t.Errorf("%s in %s: %d items, continue %q, %v; want %d, %q", tc.name, mediaType, items, cont, err, tc.items, tc.cont)
			}
		}
	}
}

// TestCountPageReadsTheCRDsKeyOrder: kube-apiserver writes a custom resource's list with its
// keys sorted, the items before the metadata.
func TestCountPageReadsTheCRDsKeyOrder(t *testing.T) {
	body := `{"apiVersion":"bench.vireo.dev/v1","items":[{"metadata":{"continue":"not this"}},{}],"kind":"VirtualMachineInstanceList","metadata":{"continue":"next","resourceVersion":"7"}}`
	items, cont, err := countPage([]byte(body), false)
	if err != nil || items != 2 || cont != "next" {
		t.Errorf("got %d items, continue %q, %v; want 2, %q", items, cont, err, "next")
	}
}

func TestCountPageRefusesWhatIsNotAList(t *testing.T) {
	for _, tc := range []struct {
		body     string
		protobuf bool
	}{
		{`{"items": {}}`, false},
		{`[1, 2]`, false},
		{`{"items": [1, 2`, false},
		{`{"kind": "x"}`, true},
		{"k8s\x00\x12\xff", true},
		{"k8s\x00", true},
	} {
		if n, _, err := countPage([]byte(tc.body), tc.protobuf); err == nil {
			t.Errorf("%q (protobuf %v): counted %d items, want an error", tc.body, tc.protobuf, n)
		}
	}
}

func encodeAs(t *testing.T, obj runtime.Object, mediaType string) []byte {
	t.Helper()
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), mediaType)
	if !ok {
		t.Fatalf("no serializer for %s", mediaType)
	}
	var out bytes.Buffer
	if err := scheme.Codecs.EncoderForVersion(info.Serializer, v1.SchemeGroupVersion).Encode(obj, &out); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
