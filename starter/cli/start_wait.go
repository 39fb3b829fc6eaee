package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"handoff/workflows"
)

const (
	// waitFirstPoll and waitMaxPoll pace start --wait: quick at first, as a
	// supervisor usually runs within a second, then every few seconds.
	waitFirstPoll = 100 * time.Millisecond
	waitMaxPoll   = 2 * time.Second
	// waitErrors is how many recent errors a failed wait prints.
	waitErrors = 5
)

// waitReady queries the supervisor's status until its state is RUNNING or
// IDLE, printing each state it goes through on stderr, and returns the last
// state seen. It fails if the supervisor becomes unhealthy, suspended or
// stopped, or is not ready within timeout. A status query that fails (no
// worker yet, a workflow task not yet run) is retried until the timeout.
func (a *app) waitReady(ctx context.Context, c client.Client, id string, timeout time.Duration) (string, error) {
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := a.now()
	elapsed := func() string { return fmt.Sprintf("%.1fs", a.now().Sub(start).Seconds()) }
	var (
		last            *workflows.SupervisorStatus // the last answer
		lastErr         error                       // the last failed query, if none answered since
		lastState       string
		shown, shownErr string // what was last printed
		delay           = waitFirstPoll
	)
	for {
		st, err := queryStatus(wctx, c, id, queryTimeout)
		if ctx.Err() != nil {
			return lastState, ctx.Err()
		}
		var ee *exitError
		if errors.As(err, &ee) && ee.code == ExitNotFound {
			return lastState, err
		}
		switch {
		case err == nil:
			last, lastErr, lastState = &st, nil, st.State
			state := stateText(st)
			if state != shown {
				fmt.Fprintf(a.io.Stderr, "[%s] supervisor %s is %s\n", elapsed(), id, state)
				shown = state
			}
			switch {
			case st.State == workflows.StateRunning || st.State == workflows.StateIdle:
				return st.State, nil
			case strings.HasPrefix(st.State, "UNHEALTHY_"):
				return st.State, fmt.Errorf("supervisor %s is %s%s", id, state, errorsText(st, id))
			case st.State == workflows.StateSuspended:
				return st.State, fmt.Errorf("supervisor %s is %s: it runs again after `starter resume %s`%s", id, state, id, errorsText(st, id))
			case st.State == workflows.StateStopping || st.State == workflows.StateStopped:
				return st.State, fmt.Errorf("supervisor %s is %s: it will not run again%s", id, state, errorsText(st, id))
			}
		case wctx.Err() == nil:
			lastErr = err
			if msg := err.Error(); msg != shownErr {
				fmt.Fprintf(a.io.Stderr, "[%s] supervisor %s has not answered yet: %v\n", elapsed(), id, err)
				shownErr = msg
			}
		}
		select {
		case <-ctx.Done():
			return lastState, ctx.Err()
		case <-wctx.Done():
			switch {
			case last != nil:
				return lastState, fmt.Errorf("supervisor %s is not RUNNING or IDLE after %s: it is %s%s",
					id, timeout, stateText(*last), errorsText(*last, id))
			case lastErr != nil:
				return "", fmt.Errorf("supervisor %s did not answer its status query within %s: %w", id, timeout, lastErr)
			}
			return "", fmt.Errorf("supervisor %s did not answer its status query within %s", id, timeout)
		case <-time.After(delay):
		}
		delay = min(2*delay, waitMaxPoll)
	}
}

// stateText is a status's state, with its detailed state when that says more.
func stateText(s workflows.SupervisorStatus) string {
	if s.DetailedState != "" && s.DetailedState != s.State {
		return s.State + " (" + s.DetailedState + ")"
	}
	return s.State
}

// errorsText lists the latest recent errors of a status for an error
// message, or points at status when there are none.
func errorsText(s workflows.SupervisorStatus, id string) string {
	if len(s.RecentErrors) == 0 {
		return fmt.Sprintf("; no recent errors (see `starter status %s`)", id)
	}
	errs := s.RecentErrors[max(len(s.RecentErrors)-waitErrors, 0):]
	var b strings.Builder
	fmt.Fprintf(&b, "; recent errors (see `starter status %s`):", id)
	for _, e := range errs {
		fmt.Fprintf(&b, "\n  %s  %s", e.Time.UTC().Format(time.RFC3339), e.Message)
	}
	return b.String()
}
