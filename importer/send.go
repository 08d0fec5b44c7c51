package importer

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"syscall"

	"k8s.io/klog/v2"

	"github.com/vireo-dev/vireo/importer/uploadapi"
	"github.com/vireo-dev/vireo/importer/uploadclient"
)

// Send sends the disk image at path through the upload protocol to the importer serving
// socket: the source side of a clone across namespaces, whose Pod mounts the source claim in
// its namespace and the target importer's directory on the same node. A missing image and a
// failed import are permanent; other failures (the importer not listening yet, after the
// client's retries) are transient.
func Send(ctx context.Context, path, socket string) error {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return permanentf("opening the image to send: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return permanentf("the image to send: %w", err)
	}
	if !st.Mode().IsRegular() {
		return permanentf("the image to send, %s, is not a regular file", path)
	}
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", socket)
	}}}
	klog.InfoS("Sending", "path", path, "bytes", st.Size(), "socket", socket)
	err = uploadclient.Transfer(ctx, &uploadclient.HTTP{Client: client, URL: "http://upload" + uploadapi.Path}, f, st.Size(), uploadclient.DefaultOptions(), nil)
	if errors.Is(err, uploadclient.ErrFailed) {
		return &Error{Err: err}
	}
	if err != nil {
		return &Error{Transient: true, Err: err}
	}
	klog.InfoS("Sent", "path", path, "bytes", st.Size())
	return nil
}
