package vireoctl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/spf13/cobra"
	"golang.org/x/term"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// escapeByte is Ctrl+], which ends a console session from a terminal (as in virtctl and telnet).
const escapeByte = 0x1d

type consoleOptions struct {
	timeout time.Duration
	drain   time.Duration
}

func newConsoleCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &consoleOptions{timeout: 5 * time.Minute, drain: 2 * time.Second}
	cmd := &cobra.Command{
		Use:   "console NAME",
		Short: "Attach to the serial console of a VMI (escape: Ctrl+])",
		Long: `Attach to the serial console of a VMI through kube-apiserver.

From a terminal, the terminal is put in raw mode and Ctrl+] ends the session. From a pipe,
standard input is sent as it is, and vireoctl exits once it has ended and the console has
been quiet for --drain.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: nameCompletion(flags, completeVMIs),
		RunE: func(c *cobra.Command, args []string) error {
			t, err := resolve(flags)
			if err != nil {
				return err
			}
			return o.run(c.Context(), t, args[0], streams)
		},
	}
	cmd.Flags().DurationVar(&o.timeout, "timeout", o.timeout, "How long to wait for the VMI to be running.")
	cmd.Flags().DurationVar(&o.drain, "drain", o.drain, "From a pipe: after standard input ends, exit once the console printed nothing for this long.")
	return cmd
}

// connect opens the console, retrying while the VMI is not running yet (400) or its node
// agent is not reachable yet (503), up to the timeout.
// With reconnect, network errors (kube-apiserver restarting) are retried too.
func (o *consoleOptions) connect(ctx context.Context, t *target, name string, errOut io.Writer, reconnect bool) (*websocket.Conn, error) {
	deadline := time.Now().Add(o.timeout)
	waited := false
	for {
		ws, code, err := t.dial(name, "console")
		if err == nil {
			return ws, nil
		}
		retry := code == http.StatusBadRequest || code == http.StatusServiceUnavailable || (reconnect && code == 0)
		if !retry || time.Now().After(deadline) {
			return nil, err
		}
		if !waited {
			fmt.Fprintf(errOut, "Waiting up to %s for VMI %s/%s: %v\n", o.timeout, t.namespace, name, err)
			waited = true
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

func (o *consoleOptions) run(ctx context.Context, t *target, name string, streams genericiooptions.IOStreams) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ws, err := o.connect(ctx, t, name, streams.ErrOut, false)
	if err != nil {
		return err
	}
	in, isFile := streams.In.(*os.File)
	raw := isFile && term.IsTerminal(int(in.Fd()))
	if raw {
		state, err := term.MakeRaw(int(in.Fd()))
		if err != nil {
			ws.Close()
			return fmt.Errorf("putting the terminal in raw mode: %w", err)
		}
		defer func() { _ = term.Restore(int(in.Fd()), state) }()
		fmt.Fprintf(streams.ErrOut, "Connected to the console of %s/%s. Escape: Ctrl+]\r\n", t.namespace, name)
	}
	// Unbuffered: standard input is read only as fast as the console takes it, also while
	// reconnecting.
	input := make(chan []byte)
	inEnd := make(chan error, 1)
	go readInput(streams.In, raw, input, inEnd)
	for {
		err := o.session(ws, streams.Out, input, inEnd, raw)
		ws.Close()
		var lost *lostError
		if !errors.As(err, &lost) {
			return err
		}
		fmt.Fprintf(streams.ErrOut, "%v; reconnecting\r\n", err)
		if ws, err = o.connect(ctx, t, name, streams.ErrOut, true); err != nil {
			return err
		}
		fmt.Fprintf(streams.ErrOut, "Reconnected to the console of %s/%s\r\n", t.namespace, name)
	}
}

// lostError: the connection broke without a close message (network, kube-apiserver
// restart), or the server going away said why (reason).
type lostError struct {
	err    error
	reason string
}

func (e *lostError) Error() string {
	if e.reason != "" {
		return "the console session was interrupted: " + e.reason
	}
	return fmt.Sprintf("the console connection was lost (network, or kube-apiserver restarted): %v", e.err)
}

// session runs one websocket until the user ends it (nil), the server closes it (its reason) or
// the connection is lost (*lostError).
func (o *consoleOptions) session(ws *websocket.Conn, out io.Writer, input <-chan []byte, inEnd <-chan error, raw bool) error {
	var lastOutput atomic.Int64
	lastOutput.Store(time.Now().UnixNano())
	outDone := make(chan error, 1)
	go func() {
		for {
			_, data, err := ws.ReadMessage()
			if err != nil {
				outDone <- err
				return
			}
			lastOutput.Store(time.Now().UnixNano())
			if _, err := out.Write(data); err != nil {
				outDone <- err
				return
			}
		}
	}()
	for {
		select {
		case err := <-outDone:
			return sessionEnded(err)
		case chunk := <-input:
			if err := ws.WriteMessage(websocket.BinaryMessage, chunk); err != nil {
				return &lostError{err: err}
			}
		case err := <-inEnd:
			if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, errEscape) {
				return err
			}
			if errors.Is(err, io.EOF) && !raw {
				// A pipe ended: let the guest's answer arrive before leaving.
				lastOutput.Store(time.Now().UnixNano())
				if err := o.drainOutput(outDone, &lastOutput); err != nil {
					// Nothing is left to send: no reconnecting.
					return errors.New(err.Error())
				}
			}
			_ = ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
			return nil
		}
	}
}

// drainOutput waits until the console printed nothing for o.drain, or the session ended.
func (o *consoleOptions) drainOutput(outDone <-chan error, lastOutput *atomic.Int64) error {
	tick := time.NewTicker(o.drain / 10)
	defer tick.Stop()
	for {
		select {
		case err := <-outDone:
			return sessionEnded(err)
		case <-tick.C:
			if time.Since(time.Unix(0, lastOutput.Load())) >= o.drain {
				return nil
			}
		}
	}
}

var errEscape = errors.New("escape")

// readInput reads standard input in chunks onto input until it ends or, from a terminal, the
// user types Ctrl+]; then it reports why on end.
func readInput(in io.Reader, raw bool, input chan<- []byte, end chan<- error) {
	buf := make([]byte, 4096)
	for {
		n, err := in.Read(buf)
		chunk := append([]byte(nil), buf[:n]...)
		escaped := false
		if raw {
			if i := bytes.IndexByte(chunk, escapeByte); i >= 0 {
				chunk, escaped = chunk[:i], true
			}
		}
		if len(chunk) > 0 {
			input <- chunk
		}
		if escaped {
			end <- errEscape
			return
		}
		if err != nil {
			end <- err
			return
		}
	}
}

// sessionEnded says why the server ended the session.
func sessionEnded(err error) error {
	var ce *websocket.CloseError
	// 1001: the server (vireo-apiserver, the node agent) is going away, another will serve.
	if errors.As(err, &ce) && ce.Code == websocket.CloseGoingAway {
		return &lostError{err: err, reason: ce.Text}
	}
	// 1006 is no close message at all: the connection broke.
	if errors.As(err, &ce) && ce.Code != websocket.CloseAbnormalClosure {
		if ce.Text == "" {
			return fmt.Errorf("the console session was closed (code %d)", ce.Code)
		}
		return fmt.Errorf("the console session ended: %s", ce.Text)
	}
	return &lostError{err: err}
}

// serverMessage is the message of a Kubernetes Status body, or the body.
func serverMessage(body []byte) string {
	var st metav1.Status
	if json.Unmarshal(body, &st) == nil && st.Message != "" {
		return st.Message
	}
	return string(bytes.TrimSpace(body))
}
