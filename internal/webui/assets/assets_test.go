package assets

import (
	"io/fs"
	"strings"
	"testing"
)

func TestThePlaceholderIsEmbedded(t *testing.T) {
	files, err := FS()
	if err != nil {
		t.Fatal(err)
	}
	index, err := fs.ReadFile(files, "index.html")
	if err != nil {
		t.Fatalf("index.html: %v", err)
	}
	if !strings.Contains(string(index), `<script src="/app.js"`) {
		t.Errorf("index.html does not load /app.js")
	}
	if strings.Contains(string(index), "<style") || strings.Contains(string(index), " style=") || strings.Contains(string(index), "<script>") {
		t.Errorf("index.html has inline styles or scripts, which the server's CSP refuses")
	}
	app, err := fs.ReadFile(files, "app.js")
	if err != nil {
		t.Fatalf("app.js: %v", err)
	}
	if !strings.Contains(string(app), `fetch("/api/v1/namespaces"`) {
		t.Errorf("app.js does not list the namespaces through the proxy")
	}
}
