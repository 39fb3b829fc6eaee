package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"go.temporal.io/sdk/client"

	"handoff/workflows"
)

// clearScreen moves the cursor home and clears the terminal.
const clearScreen = "\x1b[H\x1b[2J"

// watchStatus queries the supervisor every interval until ctx ends (Ctrl-C),
// which is a normal end. A failed query is reported and retried; only a
// supervisor that does not exist ends the watch with an error.
func (a *app) watchStatus(ctx context.Context, c client.Client, id string, interval time.Duration) error {
	redraw := *a.out.format == outputText && isTerminal(a.io.Stdout)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		st, err := queryStatus(ctx, c, id, queryTimeout)
		if ctx.Err() != nil {
			return nil
		}
		var ee *exitError
		if errors.As(err, &ee) && ee.code == ExitNotFound {
			return err
		}
		now := time.Now().UTC()
		if redraw {
			if derr := a.redrawStatus(id, interval, now, st, err); derr != nil {
				return derr
			}
		} else if err != nil {
			fmt.Fprintf(a.io.Stderr, "%s error: %v\n", now.Format(time.RFC3339), err)
		} else if perr := a.out.print(watchLine{Time: now, SupervisorStatus: st}); perr != nil {
			return perr
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// redrawStatus replaces the terminal's contents with the latest status, or
// the header and the error when the query failed.
func (a *app) redrawStatus(id string, interval time.Duration, now time.Time, st workflows.SupervisorStatus, qerr error) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%severy %s: starter status %s    %s    (Ctrl-C to stop)\n\n", clearScreen, interval, id, now.Format(time.RFC3339))
	if qerr == nil {
		if err := writeStatus(&b, st); err != nil {
			return err
		}
	}
	if _, err := a.io.Stdout.Write(b.Bytes()); err != nil {
		return err
	}
	if qerr != nil {
		fmt.Fprintf(a.io.Stderr, "error: %v\n", qerr)
	}
	return nil
}

// isTerminal reports whether w is a character device (a terminal), without
// golang.org/x/term: pipes and files are not.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// watchLine is one refresh of a watch that is not on a terminal: a line in
// text mode, the status with its time in json mode.
type watchLine struct {
	Time time.Time `json:"time"`
	workflows.SupervisorStatus
}

func (l watchLine) writeText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "%s %s lag=%d published=%d rows\n",
		l.Time.Format(time.RFC3339), l.State, l.Lag, l.Published.Rows)
	return err
}
