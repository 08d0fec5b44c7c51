package vireoctl

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// logProgressEvery is how often an upload's progress is printed where the output is not a
// terminal (a log): a line each time.
const logProgressEvery = 5 * time.Second

// uploadProgress shows an upload's progress. Its update may be called from the HTTP
// transport's goroutine.
type uploadProgress interface {
	// update records the position of the bytes sent.
	update(pos int64)
	// finish shows the last position and ends the output's line.
	finish()
}

// newUploadProgress shows the progress of an upload of total bytes on out: a progress bar with
// the rate and ETA on a terminal (schollz/progressbar), a plain line every logProgressEvery
// elsewhere.
func newUploadProgress(out io.Writer, terminal bool, total int64) uploadProgress {
	if !terminal {
		return &progressLines{out: out, total: total, now: time.Now}
	}
	bar := progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(out),
		progressbar.OptionSetDescription("Uploading"),
		progressbar.OptionShowBytes(true),
		progressbar.OptionUseIECUnits(true),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(250*time.Millisecond),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(out) }),
	)
	return &progressBar{bar: bar}
}

// progressBar is the terminal's progress.
type progressBar struct {
	bar *progressbar.ProgressBar
}

func (p *progressBar) update(pos int64) { _ = p.bar.Set64(pos) }

func (p *progressBar) finish() {
	if !p.bar.IsFinished() {
		_ = p.bar.Finish()
	}
}

// progressLines prints "Uploading: 512.0 MiB of 2.0 GiB (25.0%)" every logProgressEvery.
type progressLines struct {
	out   io.Writer
	total int64
	now   func() time.Time

	mu      sync.Mutex
	pos     int64
	last    time.Time
	started bool
}

func (p *progressLines) update(pos int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if !p.started {
		p.last, p.started = now, true
	}
	p.pos = pos
	if now.Sub(p.last) >= logProgressEvery {
		p.last = now
		fmt.Fprintln(p.out, p.line())
	}
}

func (p *progressLines) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started {
		fmt.Fprintln(p.out, p.line())
	}
}

func (p *progressLines) line() string {
	pct := 100.0
	if p.total > 0 {
		pct = float64(p.pos) * 100 / float64(p.total)
	}
	return fmt.Sprintf("Uploading: %s of %s (%.1f%%)", formatBytes(p.pos), formatBytes(p.total), pct)
}

// formatBytes is n in the largest binary unit that keeps it at least 1, with one decimal.
func formatBytes(n int64) string {
	const units = "KMGTPE"
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n)/1024, 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	return fmt.Sprintf("%.1f %ciB", v, units[i])
}
