package cli

import (
	"context"
	"errors"
	"fmt"
)

// Exit codes of the starter command.
const (
	ExitOK       = 0 // the command did what was asked
	ExitFailure  = 1 // the command ran and failed
	ExitUsage    = 2 // bad flags, arguments or environment; nothing was done
	ExitNotFound = 3 // the supervisor does not exist
)

// exitError carries an exit code other than ExitFailure up to Run.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErrorf(format string, args ...any) error {
	return &exitError{code: ExitUsage, err: fmt.Errorf(format, args...)}
}

func notFoundErrorf(format string, args ...any) error {
	return &exitError{code: ExitNotFound, err: fmt.Errorf(format, args...)}
}

// exitCode maps an error to the process exit code. Errors raised before a
// command's action ran (flag parsing, argument checks) are usage errors.
func exitCode(err error, actionStarted bool) int {
	var ee *exitError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ee):
		return ee.code
	case !actionStarted && !errors.Is(err, context.Canceled):
		return ExitUsage
	}
	return ExitFailure
}
