package domain

import (
	"testing"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

func TestMemBalloonFollowsAutoattach(t *testing.T) {
	for _, tc := range []struct {
		autoattach *bool
		want       string
	}{{nil, "virtio"}, {new(true), "virtio"}, {new(false), "none"}} {
		if got := miscDevices(&v1.Devices{AutoattachMemBalloon: tc.autoattach}, nil).memBalloon.Model; got != tc.want {
			t.Errorf("autoattachMemBalloon %v: balloon model %q, want %q", tc.autoattach, got, tc.want)
		}
	}
}
