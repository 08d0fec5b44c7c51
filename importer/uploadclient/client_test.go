package uploadclient

import (
	"testing"
	"time"
)

func TestChunksFollowTheRate(t *testing.T) {
	o := DefaultOptions()
	for _, tc := range []struct {
		n    int64
		took time.Duration
		want int64
	}{
		{1 << 20, 7 * time.Second, (1 << 20) * 10 / 7}, // 150 KB/s: about 10 s worth
		{1 << 20, 10 * time.Millisecond, 4 << 20},      // fast: grows, at most 4x at a time
		{16 << 20, 10 * time.Millisecond, 32 << 20},    // never above --chunk-size
		{1 << 20, 10 * time.Minute, 64 << 10},          // a crawl: the floor
		{128 << 10, 5 * time.Second, (128 << 10) * 2},  // 26 KB/s
	} {
		if got := o.NextChunk(tc.n, tc.took); got != tc.want {
			t.Errorf("after %d bytes in %s: next chunk %d, want %d", tc.n, tc.took, got, tc.want)
		}
	}
}
