package virt

import (
	"context"
	"encoding/base64"
	"fmt"
	"time"
)

// execPollInterval is how often a command's end is asked for.
const execPollInterval = 100 * time.Millisecond

// Ping asks the guest agent of the domain to answer (QEMU's guest-ping), waiting at most timeout.
func (c *Conn) Ping(ctx context.Context, name string, timeout time.Duration) error {
	_, err := agentCommand[struct{}](ctx, c, name, "guest-ping", nil, agentSeconds(timeout))
	return err
}

// ExecResult is how a command run in the guest ended.
type ExecResult struct {
	// ExitCode is its exit code (-1 when a signal ended it).
	ExitCode int
	// Output is the start of what it wrote to standard output and standard error.
	Output string
}

// Exec runs path with args in the guest through its agent (guest-exec, guest-exec-status) and
// waits for its end until ctx ends. The command keeps running in the guest when ctx ends first.
func (c *Conn) Exec(ctx context.Context, name, path string, args []string) (ExecResult, error) {
	started, err := agentCommand[struct {
		PID int `json:"pid"`
	}](ctx, c, name, "guest-exec", map[string]any{"path": path, "arg": args, "capture-output": true}, agentTimeoutSeconds)
	if err != nil {
		return ExecResult{}, err
	}
	tick := time.NewTicker(execPollInterval)
	defer tick.Stop()
	for {
		st, err := agentCommand[struct {
			Exited   bool   `json:"exited"`
			ExitCode *int   `json:"exitcode"`
			Signal   *int   `json:"signal"`
			OutData  string `json:"out-data"`
			ErrData  string `json:"err-data"`
		}](ctx, c, name, "guest-exec-status", map[string]any{"pid": started.PID}, agentTimeoutSeconds)
		if err != nil {
			return ExecResult{}, err
		}
		if st.Exited {
			res := ExecResult{ExitCode: -1}
			if st.ExitCode != nil {
				res.ExitCode = *st.ExitCode
			}
			for _, data := range []string{st.OutData, st.ErrData} {
				if b, err := base64.StdEncoding.DecodeString(data); err == nil {
					res.Output += string(b)
				}
			}
			return res, nil
		}
		select {
		case <-ctx.Done():
			return ExecResult{}, fmt.Errorf("%s did not end in time: %w", path, ctx.Err())
		case <-tick.C:
		}
	}
}

// agentSeconds is a timeout as libvirt's agent timeout: whole seconds, at least 1.
func agentSeconds(d time.Duration) int32 {
	s := int32((d + time.Second - 1) / time.Second)
	if s < 1 {
		return 1
	}
	return s
}

// SetAuthorizedKeys makes keys the SSH authorized keys of user in the guest, replacing what the
// file held (guest-ssh-add-authorized-keys with reset).
func (c *Conn) SetAuthorizedKeys(ctx context.Context, name, user string, keys []string) error {
	_, err := agentCommand[struct{}](ctx, c, name, "guest-ssh-add-authorized-keys",
		map[string]any{"username": user, "keys": keys, "reset": true}, agentTimeoutSeconds)
	return err
}

// SetUserPassword sets the password of user in the guest (guest-set-user-password, in clear:
// the guest hashes it).
func (c *Conn) SetUserPassword(ctx context.Context, name, user, password string) error {
	_, err := agentCommand[struct{}](ctx, c, name, "guest-set-user-password",
		map[string]any{"username": user, "password": base64.StdEncoding.EncodeToString([]byte(password)), "crypted": false}, agentTimeoutSeconds)
	return err
}
