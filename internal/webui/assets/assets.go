// Package assets holds the web console's front-end, embedded into vireoctl so that `vireoctl ui`
// serves it with no file beside the binary. dist/ is what the browser gets: index.html at its
// root and whatever it loads. The repository holds a placeholder there; the front-end's build
// (`make ui`, to come) writes the real console into the same directory, and no Go code names its
// files.
package assets

import (
	"embed"
	"io/fs"
)

// dist is the directory the front-end is built into ("all:" keeps files whose names start with
// a dot or an underscore, which bundlers write).
//
//go:embed all:dist
var dist embed.FS

// FS is the web console's files, index.html at its root.
func FS() (fs.FS, error) {
	return fs.Sub(dist, "dist")
}
