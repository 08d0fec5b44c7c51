package assets

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
)

func TestPickPrefersTheBuildAndFallsBackToThePlaceholder(t *testing.T) {
	fallback := fstest.MapFS{"placeholder/index.html": {Data: []byte("placeholder")}}
	for _, c := range []struct {
		name      string
		built     fstest.MapFS
		want      string
		wantBuilt bool
	}{
		{"built", fstest.MapFS{"dist/.gitkeep": {}, "dist/index.html": {Data: []byte("console")}, "dist/app.js": {}}, "console", true},
		{"fresh checkout: only .gitkeep", fstest.MapFS{"dist/.gitkeep": {}}, "placeholder", false},
		{"a build without an index", fstest.MapFS{"dist/.gitkeep": {}, "dist/app.js": {}}, "placeholder", false},
	} {
		files, built, err := pick(c.built, fallback)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		index, err := fs.ReadFile(files, "index.html")
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if string(index) != c.want || built != c.wantBuilt {
			t.Errorf("%s: index %q built %v, want %q %v", c.name, index, built, c.want, c.wantBuilt)
		}
	}
}

// inline finds what the server's CSP refuses in a page: inline scripts, style elements and
// attributes, event handler attributes.
var inline = regexp.MustCompile(`<script>|<script [^>]*>[^<]|<style|\sstyle=|\son[a-z]+=`)

func TestThePlaceholderIsEmbeddedAndKeepsToTheCSP(t *testing.T) {
	files, err := fs.Sub(placeholder, "placeholder")
	if err != nil {
		t.Fatal(err)
	}
	index, err := fs.ReadFile(files, "index.html")
	if err != nil {
		t.Fatalf("index.html: %v", err)
	}
	if !strings.Contains(string(index), `<script src="/app.js"`) || !strings.Contains(string(index), "make build") {
		t.Errorf("the placeholder does not load /app.js or say how to build the console:\n%s", index)
	}
	if m := inline.FindString(string(index)); m != "" {
		t.Errorf("the placeholder has %q, which the server's CSP refuses", m)
	}
	app, err := fs.ReadFile(files, "app.js")
	if err != nil {
		t.Fatalf("app.js: %v", err)
	}
	if !strings.Contains(string(app), `fetch("/api/v1/namespaces"`) {
		t.Errorf("app.js does not list the namespaces through the proxy")
	}
}

// TestTheEmbeddedConsole checks what this binary embeds: the console when `make ui` ran
// before the build, the placeholder otherwise (each must be whole).
func TestTheEmbeddedConsole(t *testing.T) {
	files, err := FS()
	if err != nil {
		t.Fatal(err)
	}
	index, err := fs.ReadFile(files, "index.html")
	if err != nil {
		t.Fatalf("index.html: %v", err)
	}
	if m := inline.FindString(string(index)); m != "" {
		t.Errorf("index.html has %q, which the server's CSP refuses", m)
	}
	if !Built() {
		t.Log("dist/ holds no build (make ui did not run): the placeholder is embedded")
		return
	}
	for _, want := range []string{`<script type="module" src="/app.js">`, `<link rel="stylesheet" href="/app.css">`} {
		if !strings.Contains(string(index), want) {
			t.Errorf("the built index.html lacks %s", want)
		}
	}
	for _, name := range []string{"app.js", "app.css", "THIRD-PARTY-LICENSES.txt"} {
		if _, err := fs.Stat(files, name); err != nil {
			t.Errorf("the build lacks %s: %v", name, err)
		}
	}
	app, _ := fs.ReadFile(files, "app.js")
	chunks := regexp.MustCompile(`chunks/[A-Za-z0-9_-]+\.js`).FindAllString(string(app), -1)
	if len(chunks) == 0 {
		t.Errorf("app.js loads no chunks (console, display)")
	}
	for _, c := range chunks {
		if _, err := fs.Stat(files, c); err != nil {
			t.Errorf("app.js imports %s, which the build lacks", c)
		}
	}
}
