// Package uploadapi names the parts of the upload protocol that its four parties share: the
// importer serving it on a unix socket, vireo-controller placing that socket, the node agent
// relaying datavolumes/upload (and a clone's source Pod) to it, and vireoctl image-upload
// speaking it. It has no dependencies, so that none of them links another's code to agree on a
// name.
//
// The protocol (served by the importer of a DataVolume with an upload source):
//   - GET Path answers 200 with a Status.
//   - PUT Path?offset=N with the next chunk as the body (and, on any chunk, the header
//     SizeHeader: the image's total size, for the progress) appends the chunk when N is the
//     number of bytes received so far and answers 200 with the Status; a wrong offset, a chunk
//     after the final one or a second PUT while one is being written answers 409 with the
//     Status, so that the client resumes from Received. A body that ends early advances
//     Received by what was copied. A chunk that would end past the size announced (by it or
//     an earlier chunk) answers 400; one without a Content-Length is cut there (Received
//     advances up to the size). With final=true the chunk (possibly empty) is the last: the
//     image ends there, and Done is set at once (the conversion may still run).
//   - Once the import has failed, every request answers 422 with the Status, whose Error is
//     the failure's message.
package uploadapi

const (
	// Path is the path the upload protocol is served at.
	Path = "/upload"
	// SizeHeader carries the image's total size in bytes on a PUT, for the progress.
	SizeHeader = "X-Upload-Size"
	// SocketName is the importer's socket in the upload Pod's emptyDir; in a clone's source
	// Pod's emptyDir, the node agent serves it, relaying to the target's.
	SocketName = "upload.sock"
	// OffsetParam and FinalParam are a PUT's query parameters.
	OffsetParam, FinalParam = "offset", "final"
)

// A clone from another namespace cannot mount its source claim in the target's importer Pod
// (a Pod mounts only claims of its own namespace). The target's importer (its upload Pod)
// receives the disk in upload mode instead, and a source Pod in the source's namespace, on the
// same node, mounts the source claim read-only and sends its disk.img to SocketName in its own
// emptyDir, where the node agent listens and relays each connection to the target's socket.
// The agent pairs the two Pods only as vireo-controller made them: the source Pod is named
// CloneSourcePodName(target DataVolume UID), labelled CloneTargetUIDLabel with that UID and
// annotated CloneTargetAnnotation with the DataVolume; the target is that DataVolume's upload
// Pod, annotated CloneSourceNamespaceAnnotation with the source Pod's namespace. A Pod that
// another namespace forges therefore reaches no one's target.
const (
	// CloneTargetAnnotation on a source Pod names its DataVolume, namespace/name: an owner
	// reference cannot cross namespaces.
	CloneTargetAnnotation = "vireo.dev/clone-target"
	// CloneTargetUIDLabel on a source Pod holds its DataVolume's UID.
	CloneTargetUIDLabel = "vireo.dev/clone-target-uid"
	// CloneSourceNamespaceAnnotation on a clone's target upload Pod names the namespace its
	// source Pod runs in.
	CloneSourceNamespaceAnnotation = "vireo.dev/clone-source-namespace"
)

// CloneSourcePodName is the name of the source Pod of the clone into the DataVolume of UID
// dataVolumeUID, in the source namespace.
func CloneSourcePodName(dataVolumeUID string) string { return "clone-source-" + dataVolumeUID }

// Status is the body of every answer of the upload protocol.
type Status struct {
	// Received is the number of bytes accepted so far: the offset of the next chunk.
	Received int64 `json:"received"`
	// Done is set once the final chunk has been accepted.
	Done bool `json:"done"`
	// Error is the import's failure, once it has failed (or what was wrong with a request
	// answered 400).
	Error string `json:"error,omitempty"`
}
