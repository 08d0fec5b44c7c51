package container

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// logPollInterval is how often a followed log is checked for growth.
const logPollInterval = 100 * time.Millisecond

// errLimitReached stops reading once LimitBytes have been written.
var errLimitReached = errors.New("log limit reached")

// ReadLog writes the messages of the CRI log file at path to w, as `kubectl logs` shows them:
// partial (P) lines are joined to the line that completes them (per stream), Tail counts whole
// messages from the end, SinceTime skips older messages, Timestamps prefixes each message with
// its RFC3339Nano time and LimitBytes truncates the output. With Follow it keeps reading as the
// file grows until ctx ends (returning ctx's error) or done reports true (the container has
// exited) and the file has been read to its end. done may be nil when not following.
func ReadLog(ctx context.Context, path string, opts LogOptions, w io.Writer, done func() bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if opts.Tail != nil {
		start, err := tailOffset(f, *opts.Tail, opts.SinceTime)
		if err != nil {
			return err
		}
		if _, err := f.Seek(start, io.SeekStart); err != nil {
			return err
		}
	}
	r := &logReader{br: bufio.NewReaderSize(f, 64*1024), opts: opts, pending: map[string]*logMessage{}, out: w, left: -1}
	if opts.LimitBytes != nil {
		r.left = *opts.LimitBytes
	}
	err = r.readAvailable()
	for err == nil && opts.Follow {
		if done != nil && done() {
			// Everything the container wrote is in the file once it has exited: read to the end.
			err = r.readAvailable()
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(logPollInterval):
		}
		err = r.readAvailable()
	}
	if err == nil {
		err = r.flush()
	}
	if errors.Is(err, errLimitReached) {
		return nil
	}
	return err
}

// criLine is one parsed line of a CRI log file.
type criLine struct {
	ts      time.Time
	rawTS   []byte
	stream  string
	partial bool
	msg     []byte
}

// parseCRILine parses `<time> <stream> <F|P> <message>` (without its newline).
func parseCRILine(b []byte) (criLine, error) {
	var l criLine
	parts := bytes.SplitN(b, []byte{' '}, 4)
	if len(parts) < 3 {
		return l, fmt.Errorf("malformed CRI log line %q", b)
	}
	ts, err := time.Parse(time.RFC3339Nano, string(parts[0]))
	if err != nil {
		return l, fmt.Errorf("malformed CRI log time %q: %w", parts[0], err)
	}
	l.ts, l.rawTS, l.stream = ts, parts[0], string(parts[1])
	switch string(parts[2]) {
	case "F":
	case "P":
		l.partial = true
	default:
		return l, fmt.Errorf("malformed CRI log tag %q", parts[2])
	}
	if len(parts) == 4 {
		l.msg = parts[3]
	}
	return l, nil
}

// logMessage is a message being assembled from its partial lines.
type logMessage struct {
	ts    time.Time
	rawTS []byte
	msg   []byte
}

// logReader assembles and writes messages as lines become available.
type logReader struct {
	br      *bufio.Reader
	opts    LogOptions
	pending map[string]*logMessage
	frag    []byte // a line not yet terminated in the file
	out     io.Writer
	left    int64 // bytes still allowed, -1 for no limit
}

// readAvailable handles every complete line up to the current end of the file.
func (r *logReader) readAvailable() error {
	for {
		line, err := r.br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			r.frag = append(r.frag, line...)
			return nil
		}
		if err != nil {
			return err
		}
		if len(r.frag) > 0 {
			line = append(r.frag, line...)
			r.frag = nil
		}
		l, err := parseCRILine(line[:len(line)-1])
		if err != nil {
			continue // a line we did not write; kubectl logs shows what it can
		}
		m := r.pending[l.stream]
		if m == nil {
			m = &logMessage{ts: l.ts, rawTS: l.rawTS}
		}
		m.msg = append(m.msg, l.msg...)
		if l.partial {
			r.pending[l.stream] = m
			continue
		}
		delete(r.pending, l.stream)
		m.msg = append(m.msg, '\n')
		if err := r.emit(m); err != nil {
			return err
		}
	}
}

// flush writes the messages whose last part never came, as they are.
func (r *logReader) flush() error {
	for _, stream := range []string{"stdout", "stderr"} {
		if m := r.pending[stream]; m != nil {
			delete(r.pending, stream)
			if err := r.emit(m); err != nil {
				return err
			}
		}
	}
	return nil
}

// emit writes one message, subject to SinceTime, Timestamps and LimitBytes.
func (r *logReader) emit(m *logMessage) error {
	if r.opts.SinceTime != nil && m.ts.Before(*r.opts.SinceTime) {
		return nil
	}
	buf := m.msg
	if r.opts.Timestamps {
		buf = make([]byte, 0, len(m.rawTS)+1+len(m.msg))
		buf = append(append(append(buf, m.rawTS...), ' '), m.msg...)
	}
	var limited bool
	if r.left >= 0 && int64(len(buf)) >= r.left {
		buf, limited = buf[:r.left], true
	}
	if r.left >= 0 {
		r.left -= int64(len(buf))
	}
	if _, err := r.out.Write(buf); err != nil {
		return err
	}
	if limited {
		return errLimitReached
	}
	return nil
}

// tailOffset returns where the last n messages (at or after since) begin in f.
func tailOffset(f *os.File, n int64, since *time.Time) (int64, error) {
	br := bufio.NewReaderSize(f, 64*1024)
	var (
		off    int64
		starts []int64 // start offsets of complete messages, oldest first, at most 2n kept
		open   = map[string]int64{}
		openTS = map[string]time.Time{}
	)
	for {
		line, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, err
		}
		lineStart := off
		off += int64(len(line))
		l, perr := parseCRILine(line[:len(line)-1])
		if perr != nil {
			continue
		}
		if _, ok := open[l.stream]; !ok {
			open[l.stream], openTS[l.stream] = lineStart, l.ts
		}
		if l.partial {
			continue
		}
		if since == nil || !openTS[l.stream].Before(*since) {
			starts = append(starts, open[l.stream])
		}
		delete(open, l.stream)
		if int64(len(starts)) > 2*n+1024 {
			starts = append(starts[:0], starts[int64(len(starts))-n:]...)
		}
	}
	for _, s := range open { // messages still being written count as the newest
		starts = append(starts, s)
	}
	if n == 0 {
		return off, nil
	}
	if int64(len(starts)) > n {
		starts = starts[int64(len(starts))-n:]
	}
	start := off
	for _, s := range starts {
		start = min(start, s)
	}
	if len(starts) == 0 {
		return off, nil
	}
	return start, nil
}
