package virt

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// logSink serialises whole prefixed lines from several goroutines into one io.Writer.
type logSink struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *logSink) line(prefix, text string) {
	if s == nil || s.w == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _ = io.WriteString(s.w, prefix+text+"\n")
}

// ring keeps the last lines written to it, for error messages.
type ring struct {
	mu    sync.Mutex
	lines []string
	max   int
}

func (r *ring) add(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, line)
	if len(r.lines) > r.max {
		r.lines = r.lines[len(r.lines)-r.max:]
	}
}

func (r *ring) last() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.lines...)
}

// copyLines forwards rd's lines to sink with prefix and remembers them in keep, until EOF.
func copyLines(rd io.Reader, sink *logSink, prefix string, keep *ring) {
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		keep.add(line)
		sink.line(prefix, line)
	}
	// A line longer than the scanner's limit ends the scan; keep draining so the writer
	// never blocks on a full pipe.
	_, _ = io.Copy(io.Discard, rd)
}

// logTailer forwards new lines of the QEMU log files in dir to sink, each prefixed with
// "qemu[<domain>]: ". It polls: the files are appended to by QEMU processes the launcher
// does not own, and a poll of one small directory costs nothing next to a TCG guest.
type logTailer struct {
	dir     string
	sink    *logSink
	every   time.Duration
	offsets map[string]int64
	partial map[string]string
	stop    chan struct{}
	done    chan struct{}
}

func startLogTailer(dir string, sink *logSink, every time.Duration) *logTailer {
	t := &logTailer{dir: dir, sink: sink, every: every, offsets: map[string]int64{},
		partial: map[string]string{}, stop: make(chan struct{}), done: make(chan struct{})}
	// Lines written before this daemon started belong to an earlier run.
	t.scan(true)
	go t.run()
	return t
}

func (t *logTailer) run() {
	defer close(t.done)
	tick := time.NewTicker(t.every)
	defer tick.Stop()
	for {
		select {
		case <-t.stop:
			t.scan(false)
			return
		case <-tick.C:
			t.scan(false)
		}
	}
}

// close forwards what is left and stops the tailer.
func (t *logTailer) close() {
	select {
	case <-t.stop:
	default:
		close(t.stop)
	}
	<-t.done
}

func (t *logTailer) scan(skip bool) {
	paths, _ := filepath.Glob(filepath.Join(t.dir, "*.log"))
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		off := t.offsets[p]
		if skip || fi.Size() < off {
			// Skipping old content, or the file was truncated: start from its end.
			t.offsets[p] = fi.Size()
			continue
		}
		if fi.Size() == off {
			continue
		}
		t.offsets[p] = off + t.forward(p, off)
	}
}

// forward sends the complete lines of p after off and returns how many bytes it consumed.
func (t *logTailer) forward(p string, off int64) int64 {
	f, err := os.Open(p)
	if err != nil {
		return 0
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return 0
	}
	data, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return 0
	}
	name := strings.TrimSuffix(filepath.Base(p), ".log")
	end := bytes.LastIndexByte(data, '\n')
	if end < 0 {
		return 0
	}
	for _, line := range strings.Split(string(data[:end]), "\n") {
		t.sink.line("qemu["+name+"]: ", line)
	}
	return int64(end + 1)
}

// qemuLogTail returns up to n lines QEMU wrote to the domain log after the command line of
// its latest start: the lines that explain why it ended. libvirt's own closing line
// ("shutting down, reason=...") is left out: the event already says it.
func qemuLogTail(content string, n int) []string {
	lines := strings.Split(strings.TrimRight(content, "\n"), "\n")
	from := 0
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], ": starting up libvirt version") {
			// The command line follows as "VAR=value \" and "-option \" lines; its last
			// line has no trailing backslash.
			from = i + 1
			for from < len(lines) && strings.HasSuffix(lines[from], "\\") {
				from++
			}
			from = min(from+1, len(lines))
			break
		}
	}
	var out []string
	for _, l := range lines[from:] {
		if !strings.Contains(l, ": shutting down, reason=") {
			out = append(out, l)
		}
	}
	return tailNonEmpty(out, n)
}

func tailNonEmpty(lines []string, n int) []string {
	var out []string
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

// readQEMULogTail reads the tail of a domain's log file, at most its last 64 KiB.
func readQEMULogTail(path string, n int) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > 64<<10 {
		_, _ = f.Seek(fi.Size()-64<<10, io.SeekStart)
	}
	data, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return nil
	}
	return qemuLogTail(string(data), n)
}
