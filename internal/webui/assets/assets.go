// Package assets holds the web console's front-end, embedded into vireoctl so that `vireoctl ui`
// serves it with no file beside the binary.
//
// The console's sources are under web/ at the top of the repository; `make ui` (which
// `make build` runs first) installs their npm dependencies from web/package-lock.json and bundles
// them with esbuild into dist/: index.html at its root and what it loads. dist/ is a build
// output, ignored by git but for a .gitkeep (go:embed needs a file to match). A checkout that
// never ran `make ui` (go build ./..., go test ./...) embeds an empty dist/, and FS serves the
// committed placeholder/ instead: a page that lists the namespaces and says how to build the
// console. No Go code names the built files.
package assets

import (
	"embed"
	"errors"
	"io/fs"
)

// dist is the directory the front-end is built into ("all:" keeps .gitkeep, and files whose
// names start with a dot or an underscore, which bundlers write).
//
//go:embed all:dist
var dist embed.FS

// placeholder is the page served when dist holds no build.
//
//go:embed placeholder
var placeholder embed.FS

// indexName is the entry point both trees hold at their root.
const indexName = "index.html"

// FS is the web console's files, index.html at its root: the built console, or the placeholder
// when this binary was built without `make ui`.
func FS() (fs.FS, error) {
	files, _, err := pick(dist, placeholder)
	return files, err
}

// Built says whether the embedded console is the real one (false: the placeholder).
func Built() bool {
	_, built, err := pick(dist, placeholder)
	return err == nil && built
}

// pick returns built's dist/ when it holds an index.html, else fallback's placeholder/.
func pick(built, fallback fs.FS) (fs.FS, bool, error) {
	sub, err := fs.Sub(built, "dist")
	if err != nil {
		return nil, false, err
	}
	if _, err := fs.Stat(sub, indexName); err == nil {
		return sub, true, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, false, err
	}
	sub, err = fs.Sub(fallback, "placeholder")
	if err != nil {
		return nil, false, err
	}
	return sub, false, nil
}
