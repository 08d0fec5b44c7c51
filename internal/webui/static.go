package webui

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"k8s.io/klog/v2"
)

// indexName is the single-page UI's entry point at the root of the assets.
const indexName = "index.html"

// staticHandler serves the UI's files. Any path that names no file serves index.html, so the
// page's own routes (/vms/default/demo) load the page, which then routes itself. It knows no
// file names but index.html: a built front-end replaces the placeholder without a Go change.
type staticHandler struct {
	files fs.FS
}

// newStaticHandler serves files, which must hold index.html at their root.
func newStaticHandler(files fs.FS) (*staticHandler, error) {
	info, err := fs.Stat(files, indexName)
	if err != nil {
		return nil, fmt.Errorf("webui: the assets have no %s at their root: %w", indexName, err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("webui: the assets' %s is not a file", indexName)
	}
	return &staticHandler{files: files}, nil
}

// ServeHTTP answers GET and HEAD with the file the path names, or with index.html.
func (h *staticHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "vireoctl ui: method "+r.Method+" is not allowed here (the API is under /api and /apis)", http.StatusMethodNotAllowed)
		return
	}
	name := strings.TrimPrefix(r.URL.Path, "/")
	if name != "" && name != indexName && fs.ValidPath(name) {
		data, err := h.readFile(name)
		if err == nil {
			// Built assets may change between runs; the browser asks again each time.
			w.Header().Set("Cache-Control", "no-cache")
			http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(data))
			return
		}
		if !errors.Is(err, fs.ErrNotExist) {
			klog.ErrorS(err, "Reading a web console asset", "name", name)
		}
	}
	data, err := h.readFile(indexName)
	if err != nil {
		klog.ErrorS(err, "Reading the web console's index")
		http.Error(w, "vireoctl ui: the web console's "+indexName+" cannot be read", http.StatusInternalServerError)
		return
	}
	// The index names the assets of this build; it is never kept (the server's headers say
	// no-store already).
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	http.ServeContent(w, r, indexName, time.Time{}, bytes.NewReader(data))
}

// readFile reads the regular file name; a directory counts as missing.
func (h *staticHandler) readFile(name string) ([]byte, error) {
	info, err := fs.Stat(h.files, name)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fs.ErrNotExist
	}
	return fs.ReadFile(h.files, name)
}
