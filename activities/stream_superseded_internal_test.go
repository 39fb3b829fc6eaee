package activities

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"
)

// An attempt the server no longer knows stages nothing more; one its
// group cancelled, or one still running, does.
func TestSupersededOnlyWhenTheServerRefusedTheAttempt(t *testing.T) {
	cancelled := func(cause error) context.Context {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(cause)
		return ctx
	}
	require.NoError(t, superseded(context.Background()))
	require.NoError(t, superseded(cancelled(temporal.NewCanceledError())), "the group asked the stream to return")
	require.NoError(t, superseded(cancelled(nil)))

	gone := cancelled(serviceerror.NewNotFound("workflow execution already completed"))
	require.ErrorContains(t, superseded(gone), "no longer current (workflow execution already completed)")
	child, stop := context.WithCancel(gone)
	defer stop()
	require.Error(t, superseded(child), "a stream's own context inherits the cause")
}
