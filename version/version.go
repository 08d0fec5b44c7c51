// Package version is the build's identity, read from what the Go toolchain records in every
// binary built from a git checkout (VCS revision, time and whether the tree was modified): no
// link-time flags, so `go build` and `make build` report the same. Its Info has the shape of
// KubeVirt's version (GET /apis/subresources.kubevirt.io/v1/version, `virtctl version`).
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"time"
)

// Info is KubeVirt's version shape.
type Info struct {
	GitVersion   string `json:"gitVersion"`
	GitCommit    string `json:"gitCommit"`
	GitTreeState string `json:"gitTreeState"`
	BuildDate    string `json:"buildDate"`
	GoVersion    string `json:"goVersion"`
	Compiler     string `json:"compiler"`
	Platform     string `json:"platform"`
}

// String is the one-line form `vireoctl version` prints.
func (i Info) String() string {
	return fmt.Sprintf("%#v", i)
}

// Get returns this binary's version.
func Get() Info {
	info := Info{GitVersion: "v0.0.0-dev", GitTreeState: "unknown", GoVersion: runtime.Version(), Compiler: runtime.Compiler,
		Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return info
	}
	return fromSettings(info, bi.Settings)
}

// fromSettings fills info from the build settings vcs.revision, vcs.time and vcs.modified. The
// git version is a Go pseudo-version of the commit (v0.0.0-<commit time>-<12 hex digits>),
// "-dirty" when the tree held uncommitted changes.
func fromSettings(info Info, settings []debug.BuildSetting) Info {
	var commitTime time.Time
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			info.GitCommit = s.Value
		case "vcs.time":
			if t, err := time.Parse(time.RFC3339, s.Value); err == nil {
				commitTime = t.UTC()
				info.BuildDate = t.UTC().Format(time.RFC3339)
			}
		case "vcs.modified":
			info.GitTreeState = "clean"
			if s.Value == "true" {
				info.GitTreeState = "dirty"
			}
		}
	}
	if len(info.GitCommit) >= 12 && !commitTime.IsZero() {
		info.GitVersion = "v0.0.0-" + commitTime.Format("20060102150405") + "-" + info.GitCommit[:12]
		if info.GitTreeState == "dirty" {
			info.GitVersion += "-dirty"
		}
	}
	return info
}
