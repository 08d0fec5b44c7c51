package apiserver

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	corev1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// countingWriter counts the writes an encoder makes.
type countingWriter struct{ writes, bytes int }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	w.bytes += len(p)
	return len(p), nil
}

// writesFor encodes list in mediaType with codecs and counts the writes.
func writesFor(t *testing.T, codecs serializer.CodecFactory, mediaType string, list runtime.Object) int {
	t.Helper()
	info, ok := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), mediaType)
	if !ok {
		t.Fatalf("%s is not served", mediaType)
	}
	w := &countingWriter{}
	if err := codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion).Encode(list, w); err != nil {
		t.Fatalf("encoding a list in %s: %v", mediaType, err)
	}
	return w.writes
}

// TestListsAreEncodedItemByItem guards the streaming of lists: encoded whole, an unpaged list
// of 100,000 VMIs needed its full encoding in memory at once and got vireo-apiserver killed at
// its memory limit. A streaming encoder writes each item on its own; a whole one writes once.
func TestListsAreEncodedItemByItem(t *testing.T) {
	scheme, codecs := NewScheme()
	list := &corev1.VirtualMachineInstanceList{Items: make([]corev1.VirtualMachineInstance, 20)}
	for i := range list.Items {
		list.Items[i].Name, list.Items[i].Namespace = fmt.Sprintf("vmi-%d", i), "ns"
	}
	whole := serializer.NewCodecFactory(scheme)
	for _, mediaType := range []string{runtime.ContentTypeJSON, runtime.ContentTypeProtobuf} {
		streamed, once := writesFor(t, codecs, mediaType, list), writesFor(t, whole, mediaType, list)
		if streamed < len(list.Items) || once >= len(list.Items) {
			t.Errorf("%s: %d writes for %d items with the server's codecs, %d without streaming; want one or more per item, and the control to write whole",
				mediaType, streamed, len(list.Items), once)
		}
	}
}
