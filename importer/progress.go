package importer

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"
)

// DefaultProgressInterval is the least time between two calls of Options.Progress.
const DefaultProgressInterval = 500 * time.Millisecond

// progressReader counts the bytes received from the source, reports them now and then, and
// keeps the source's first error (a decompressor may replace it with a vaguer one).
type progressReader struct {
	ctx      context.Context
	r        io.Reader
	received int64
	total    int64
	report   func(received, total int64)
	interval time.Duration
	last     time.Time
	err      error
}

func (p *progressReader) Read(b []byte) (int, error) {
	if err := p.ctx.Err(); err != nil {
		if p.err == nil {
			p.err = err
		}
		return 0, err
	}
	n, err := p.r.Read(b)
	p.received += int64(n)
	if err != nil && err != io.EOF && p.err == nil {
		p.err = err
	}
	if p.report != nil && time.Since(p.last) >= p.interval {
		p.last = time.Now()
		p.report(p.received, p.total)
	}
	return n, err
}

// done reports the final count.
func (p *progressReader) done() {
	if p.report != nil {
		p.report(p.received, p.total)
	}
}

// FormatProgress formats received of total bytes as CDI's DataVolume status.progress does:
// a percentage with two decimals ("45.23%"), rounded down so that "100.00%" means all of it,
// or "N/A" when the total is unknown (negative).
func FormatProgress(received, total int64) string {
	if total < 0 {
		return "N/A"
	}
	pct := 100.0
	if total > 0 {
		pct = math.Floor(float64(received)*10000/float64(total)) / 100
	}
	return fmt.Sprintf("%.2f%%", min(max(pct, 0), 100))
}
