package version

import (
	"runtime/debug"
	"testing"
)

func TestFromSettings(t *testing.T) {
	base := Info{GitVersion: "v0.0.0-dev", GitTreeState: "unknown"}
	got := fromSettings(base, []debug.BuildSetting{
		{Key: "vcs.revision", Value: "e37cbaf0123456789abcdef0123456789abcdef0"},
		{Key: "vcs.time", Value: "2026-11-30T21:04:05Z"},
		{Key: "vcs.modified", Value: "true"},
	})
	if got.GitVersion != "v0.0.0-20261130210405-e37cbaf01234-dirty" || got.GitTreeState != "dirty" || got.BuildDate != "2026-11-30T21:04:05Z" {
		t.Errorf("from a dirty checkout: %+v", got)
	}
	if got := fromSettings(base, nil); got.GitVersion != "v0.0.0-dev" || got.GitCommit != "" {
		t.Errorf("without VCS information: %+v", got)
	}
}
