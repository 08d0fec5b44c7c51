package vireoctl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"k8s.io/client-go/rest"
)

// uploadSizeHeader announces the image's total size on every chunk, for the importer's progress.
const uploadSizeHeader = "X-Upload-Size"

// uploadStatus is the importer's answer to every request of the upload protocol (the JSON of
// importer.UploadStatus, kept separate so that vireoctl does not link the importer).
type uploadStatus struct {
	// Received is the number of bytes the importer accepted: the offset of the next chunk.
	Received int64 `json:"received"`
	// Done is set once the final chunk was accepted.
	Done bool `json:"done"`
	// Error is the import's failure.
	Error string `json:"error,omitempty"`
}

// uploadReply is one answer of the upload subresource.
type uploadReply struct {
	code   int
	status uploadStatus
	// parsed says the body was an uploadStatus; otherwise message is the body's message (a
	// Kubernetes Status from a relay, for instance).
	parsed  bool
	message string
}

func (r uploadReply) String() string {
	msg := r.message
	if r.parsed && r.status.Error != "" {
		msg = r.status.Error
	}
	if msg == "" {
		return fmt.Sprintf("%d %s", r.code, http.StatusText(r.code))
	}
	return fmt.Sprintf("%d %s: %s", r.code, http.StatusText(r.code), msg)
}

// uploadAPI is the upload protocol, as the transfer loop sees it. An error means no answer
// (the network's); any answer, whatever its status, is an uploadReply.
type uploadAPI interface {
	// position asks for the bytes received so far.
	position(ctx context.Context) (uploadReply, error)
	// send sends length bytes of body as the chunk at offset of an image of total bytes.
	send(ctx context.Context, offset int64, body io.Reader, length, total int64, final bool) (uploadReply, error)
}

// restUploader speaks the upload protocol to a DataVolume's upload subresource through
// kube-apiserver, with the kubeconfig's HTTP client.
type restUploader struct {
	client *rest.RESTClient
	// path is the subresource's absolute path.
	path string
}

// uploadPath is the upload subresource of the DataVolume namespace/name.
func uploadPath(namespace, name string) string {
	return fmt.Sprintf("/apis/cdi.kubevirt.io/v1beta1/namespaces/%s/datavolumes/%s/upload", namespace, name)
}

func (u *restUploader) position(ctx context.Context) (uploadReply, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.client.Get().AbsPath(u.path).URL().String(), nil)
	if err != nil {
		return uploadReply{}, err
	}
	req.Header.Set("Accept", "application/json")
	return u.do(req)
}

func (u *restUploader) send(ctx context.Context, offset int64, body io.Reader, length, total int64, final bool) (uploadReply, error) {
	r := u.client.Put().AbsPath(u.path).Param("offset", strconv.FormatInt(offset, 10))
	if final {
		r = r.Param("final", "true")
	}
	if length == 0 {
		body = http.NoBody
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, r.URL().String(), body)
	if err != nil {
		return uploadReply{}, err
	}
	req.ContentLength = length
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("Accept", "application/json")
	req.Header.Set(uploadSizeHeader, strconv.FormatInt(total, 10))
	return u.do(req)
}

// do sends req with the kubeconfig's client and reads the answer.
func (u *restUploader) do(req *http.Request) (uploadReply, error) {
	resp, err := u.client.Client.Do(req)
	if err != nil {
		return uploadReply{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return uploadReply{}, fmt.Errorf("reading the answer (%s): %w", resp.Status, err)
	}
	reply := uploadReply{code: resp.StatusCode}
	if len(raw) > 0 && raw[0] == '{' && json.Unmarshal(raw, &reply.status) == nil && !isKubernetesStatus(raw) {
		reply.parsed = true
	} else {
		reply.status, reply.message = uploadStatus{}, serverMessage(raw)
	}
	return reply, nil
}

// isKubernetesStatus tells a relay's metav1.Status from the importer's answer.
func isKubernetesStatus(raw []byte) bool {
	var kind struct {
		Kind string `json:"kind"`
	}
	return json.Unmarshal(raw, &kind) == nil && kind.Kind == "Status"
}

// transferOptions tune the transfer loop.
type transferOptions struct {
	// chunkSize is the most bytes sent in one PUT.
	chunkSize int64
	// retries bounds the failed attempts in a row (no answer, 5xx, 409) before giving up;
	// bytes accepted in between start the count again.
	retries int
	// backoff is the wait after the first failure, doubled after each further one up to
	// maxBackoff.
	backoff, maxBackoff time.Duration
}

// defaultTransferOptions are image-upload's.
func defaultTransferOptions() transferOptions {
	return transferOptions{chunkSize: 8 << 20, retries: 10, backoff: time.Second, maxBackoff: 10 * time.Second}
}

// errUploadFailed is in the error of an import that failed on the server's side.
var errUploadFailed = errors.New("the import failed")

// transfer uploads the size bytes of image through api: it asks for the position, sends
// chunks from there, the last one final, and resumes from the position the server reports
// after a lost connection, a 5xx or a 409. progress is told the position of the bytes sent.
// It returns once the server has accepted the final chunk.
func transfer(ctx context.Context, api uploadAPI, image io.ReaderAt, size int64, o transferOptions, progress func(sent int64)) error {
	t := &transferState{ctx: ctx, o: o, best: -1}
	for {
		if !t.known {
			reply, err := api.position(ctx)
			if err := t.answer("GET the position", reply, err); err != nil {
				return err
			}
			continue
		}
		pos := t.pos
		switch {
		case pos.Done && pos.Received == size:
			return nil
		case pos.Done:
			return fmt.Errorf("the upload is already complete with %d bytes, and the file has %d: was another image uploaded?", pos.Received, size)
		case pos.Received > size:
			return fmt.Errorf("the server has received %d bytes, more than the file's %d: was another image uploaded?", pos.Received, size)
		}
		n := min(o.chunkSize, size-pos.Received)
		final := pos.Received+n == size
		body := &countingReader{r: io.NewSectionReader(image, pos.Received, n), pos: pos.Received, progress: progress}
		reply, err := api.send(ctx, pos.Received, body, n, size, final)
		what := fmt.Sprintf("PUT of the %d bytes at offset %d", n, pos.Received)
		if err == nil && reply.code == http.StatusOK && reply.parsed && !reply.status.Done && reply.status.Received <= pos.Received {
			return fmt.Errorf("%s: the server answered 200 but stayed at %d bytes", what, reply.status.Received)
		}
		if err := t.answer(what, reply, err); err != nil {
			return err
		}
	}
}

// transferState is the transfer loop's knowledge of the server's position and of the
// failures in a row.
type transferState struct {
	ctx      context.Context
	o        transferOptions
	pos      uploadStatus
	known    bool  // pos is the server's current position
	best     int64 // the most bytes the server reported, to tell progress
	failures int
}

// answer takes in the answer to a request: a new position, a retry after a wait, or the
// error that ends the transfer.
func (t *transferState) answer(what string, reply uploadReply, err error) error {
	switch {
	case err != nil:
		if t.ctx.Err() != nil {
			return t.ctx.Err()
		}
		t.known = false
		return t.retry(what, err)
	case reply.code == http.StatusOK && reply.parsed:
		t.learn(reply.status)
		return nil
	case reply.code == http.StatusUnprocessableEntity && reply.parsed && reply.status.Error != "":
		return fmt.Errorf("%w: %s", errUploadFailed, reply.status.Error)
	case reply.code == http.StatusUnprocessableEntity:
		return fmt.Errorf("%w: %s", errUploadFailed, reply)
	case reply.code == http.StatusConflict && reply.parsed:
		// Resume from the server's position; a wait only when it did not move.
		if t.learn(reply.status) {
			return nil
		}
		return t.retry(what, errors.New(reply.String()))
	case reply.code == http.StatusConflict || reply.code == http.StatusRequestTimeout || reply.code == http.StatusTooManyRequests || reply.code >= 500:
		t.known = false
		return t.retry(what, errors.New(reply.String()))
	}
	return fmt.Errorf("%s: the server answered %s", what, reply)
}

// learn records the server's position and reports whether it is further than ever before,
// which clears the failures.
func (t *transferState) learn(st uploadStatus) bool {
	t.pos, t.known = st, true
	if st.Received <= t.best {
		return false
	}
	t.best, t.failures = st.Received, 0
	return true
}

// retry counts a failure and waits before the next attempt, or gives up after too many.
func (t *transferState) retry(what string, cause error) error {
	t.failures++
	if t.failures > t.o.retries {
		return fmt.Errorf("%s: %w (%d failed attempts in a row; run image-upload again with --no-create to resume)", what, cause, t.failures)
	}
	wait := t.o.backoff
	for i := 1; i < t.failures && wait < t.o.maxBackoff; i++ {
		wait *= 2
	}
	timer := time.NewTimer(min(wait, t.o.maxBackoff))
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-t.ctx.Done():
		return t.ctx.Err()
	}
}

// countingReader reports the position of the bytes read from a chunk.
type countingReader struct {
	r        io.Reader
	pos      int64
	progress func(int64)
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.pos += int64(n)
	if n > 0 && c.progress != nil {
		c.progress(c.pos)
	}
	return n, err
}
