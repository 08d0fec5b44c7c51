// Package version is the build's identity: the git commit, its time and whether the tree was
// modified, set by `make build` with -ldflags -X (from git), else read from what the Go
// toolchain records in a binary built from a git checkout (absent where GOFLAGS has
// -buildvcs=false). Its Info has the shape of KubeVirt's version (GET
// /apis/subresources.kubevirt.io/v1/version, `virtctl version`).
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strconv"
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

// Set at link time by `make build` (-ldflags -X): the commit, its time (RFC 3339) and "clean"
// or "dirty".
var gitCommit, gitTime, gitTreeState string

// Get returns this binary's version.
func Get() Info {
	info := Info{GitVersion: "v0.0.0-dev", GitTreeState: "unknown", GoVersion: runtime.Version(), Compiler: runtime.Compiler,
		Platform: runtime.GOOS + "/" + runtime.GOARCH}
	var settings []debug.BuildSetting
	if gitCommit != "" {
		settings = []debug.BuildSetting{{Key: "vcs.revision", Value: gitCommit}, {Key: "vcs.time", Value: gitTime},
			{Key: "vcs.modified", Value: strconv.FormatBool(gitTreeState == "dirty")}}
	} else if bi, ok := debug.ReadBuildInfo(); ok {
		settings = bi.Settings
	}
	return fromSettings(info, settings)
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

// ForCommit is the version of a build of commit, committed at t, from a tree that was "clean" or
// "dirty": what a binary linked with those values reports (the OCI images' version label).
func ForCommit(commit string, t time.Time, treeState string) Info {
	return fromSettings(Info{GitVersion: "v0.0.0-dev", GitTreeState: "unknown"}, []debug.BuildSetting{
		{Key: "vcs.revision", Value: commit}, {Key: "vcs.time", Value: t.UTC().Format(time.RFC3339)},
		{Key: "vcs.modified", Value: strconv.FormatBool(treeState == "dirty")}})
}
