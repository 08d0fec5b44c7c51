package vireoctl

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// How often the upload's progress is printed: on a terminal the line is rewritten in place,
// elsewhere (a log) a new line is printed.
const (
	terminalProgressEvery = 250 * time.Millisecond
	logProgressEvery      = 5 * time.Second
)

// progressPrinter prints an upload's progress: bytes sent of the total, percent, rate and ETA.
// Its update may be called from the HTTP transport's goroutine.
type progressPrinter struct {
	out      io.Writer
	terminal bool
	total    int64
	now      func() time.Time

	mu      sync.Mutex
	start   time.Time
	from    int64 // the position the transfer started at (a resumed upload)
	pos     int64
	started bool
	last    time.Time
	width   int // of the line on the terminal, to blank what a shorter one leaves
}

func newProgressPrinter(out io.Writer, terminal bool, total int64) *progressPrinter {
	return &progressPrinter{out: out, terminal: terminal, total: total, now: time.Now}
}

// update records the position of the bytes sent and prints it when it is time.
func (p *progressPrinter) update(pos int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if !p.started {
		p.start, p.from, p.last, p.started = now, pos, now, true
	}
	p.pos = pos
	every := logProgressEvery
	if p.terminal {
		every = terminalProgressEvery
	}
	if now.Sub(p.last) >= every {
		p.last = now
		p.print(now, false)
	}
}

// finish prints the last position and ends the terminal's line.
func (p *progressPrinter) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started {
		p.print(p.now(), true)
	}
}

// rate is the average in bytes per second since the first update, 0 while unknown.
func (p *progressPrinter) rate(now time.Time) float64 {
	elapsed := now.Sub(p.start).Seconds()
	if !p.started || elapsed <= 0 || p.pos <= p.from {
		return 0
	}
	return float64(p.pos-p.from) / elapsed
}

// print writes the progress line; the caller holds p.mu.
func (p *progressPrinter) print(now time.Time, last bool) {
	line := p.line(now)
	if !p.terminal {
		fmt.Fprintln(p.out, line)
		return
	}
	pad := max(p.width-len(line), 0)
	p.width = len(line)
	end := ""
	if last {
		end = "\n"
	}
	fmt.Fprintf(p.out, "\r%s%s%s", line, strings.Repeat(" ", pad), end)
}

// line is "Uploading: 512.0 MiB of 2.0 GiB (25.0%), 85.3 MiB/s, ETA 18s".
func (p *progressPrinter) line(now time.Time) string {
	pct := 100.0
	if p.total > 0 {
		pct = float64(p.pos) * 100 / float64(p.total)
	}
	rate := p.rate(now)
	eta := "ETA --"
	if rate > 0 {
		eta = "ETA " + time.Duration(float64(p.total-p.pos)/rate*float64(time.Second)).Round(time.Second).String()
	}
	return fmt.Sprintf("Uploading: %s of %s (%.1f%%), %s/s, %s", formatBytes(p.pos), formatBytes(p.total), pct, formatBytes(int64(rate)), eta)
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
