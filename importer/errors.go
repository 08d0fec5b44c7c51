package importer

import (
	"context"
	"errors"
	"fmt"
	"syscall"
)

// Error is an import failure that says whether trying the whole import again may succeed.
// Transient failures are the network's and the server's (a lost connection, a timeout, a 5xx
// answer, 408 or 429) and a volume out of space (space may be freed or the volume grown);
// everything else (a 404, a checksum mismatch, an image too large or in an unsupported format,
// a corrupt image) fails the same way every time. Its message is the cause's.
type Error struct {
	// Transient says that the same import may succeed if it is tried again later.
	Transient bool
	// Err is the cause.
	Err error
}

func (e *Error) Error() string { return e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

// IsTransient reports whether err, returned by Import, is worth retrying: a volume out of space
// (ENOSPC, EDQUOT anywhere in its chain), a transient *Error in its chain, or the cancellation
// of the import's context (the importer was stopped, not refused).
func IsTransient(err error) bool {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return true // the volume is full now; the Pod's restarts retry until space returns
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Transient
	}
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// transientf returns a transient *Error with a formatted message.
func transientf(format string, args ...any) error {
	return &Error{Transient: true, Err: fmt.Errorf(format, args...)}
}

// permanentf returns a permanent *Error with a formatted message.
func permanentf(format string, args ...any) error {
	return &Error{Err: fmt.Errorf(format, args...)}
}
