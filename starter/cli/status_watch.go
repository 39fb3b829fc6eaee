package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"text/tabwriter"
	"time"

	"go.temporal.io/sdk/client"

	"handoff/workflows"
)

// clearScreen moves the cursor home and clears the terminal.
const clearScreen = "\x1b[H\x1b[2J"

// watchStatus queries the supervisor every interval until ctx ends (Ctrl-C),
// which is a normal end. A failed query is reported and retried; only a
// supervisor that does not exist ends the watch with an error.
func (a *app) watchStatus(ctx context.Context, c client.Client, k *kafkaLatest, id string, interval time.Duration) error {
	redraw := *a.out.format == outputText && isTerminal(a.io.Stdout)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var rate rowRate
	for {
		st, err := queryStatus(ctx, c, id, queryTimeout)
		if ctx.Err() != nil {
			return nil
		}
		var ee *exitError
		if errors.As(err, &ee) && ee.code == ExitNotFound {
			return err
		}
		now := a.now().UTC()
		var w watchLine
		if err == nil {
			w = watchLine{freshStatus: freshen(ctx, c, k, st, now), RowsPerSecond: rate.next(now, st.Read.Rows)}
		}
		if redraw {
			if derr := a.redrawStatus(id, interval, now, w, err); derr != nil {
				return derr
			}
		} else if err != nil {
			fmt.Fprintf(a.io.Stderr, "%s error: %v\n", now.Format(time.RFC3339), err)
		} else if perr := a.out.print(w); perr != nil {
			return perr
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// rowRate turns successive Read.Rows totals into rows per second.
type rowRate struct {
	at   time.Time // of the last total; zero before the first
	rows int64
}

// next records the total rows read at now and returns the rate since the
// previous total: nil on the first, or when the total went down (the
// supervisor started over) or no time passed.
func (r *rowRate) next(now time.Time, rows int64) *float64 {
	prevAt, prevRows := r.at, r.rows
	r.at, r.rows = now, rows
	elapsed := now.Sub(prevAt).Seconds()
	if prevAt.IsZero() || elapsed <= 0 || rows < prevRows {
		return nil
	}
	v := float64(rows-prevRows) / elapsed
	return &v
}

// redrawStatus replaces the terminal's contents with the latest status, or
// the header and the error when the query failed.
func (a *app) redrawStatus(id string, interval time.Duration, now time.Time, w watchLine, qerr error) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%severy %s: starter status %s    %s    (Ctrl-C to stop)\n\n", clearScreen, interval, id, now.Format(time.RFC3339))
	if qerr == nil {
		if err := writeWatch(&b, w); err != nil {
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

// watchErrors is how many of the recent errors the redrawn watch shows.
const watchErrors = 3

// writeWatch renders one refresh of a watch on a terminal: a compact table
// of the state, lag, read rate, open sequences and publishing, the lag of
// each partition, and the latest errors.
func writeWatch(w io.Writer, l watchLine) error {
	s := l.SupervisorStatus
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "supervisor %s: topic %s → datasource %s\n", s.ID, s.Topic, s.DataSource)
	if s.PendingSpec {
		fmt.Fprintln(tw, "a new spec applies once the task groups have published their open sequences")
	}
	open, openRows := openSequences(s)
	fmt.Fprintln(tw, "\nSTATE\tLAG\tUNPUBLISHED\tROWS/S\tOPEN SEQUENCES\tPUBLISHED\tLAST PUBLISH")
	fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%d (%d rows)\t%d rows\t%s\n",
		stateText(s), s.Lag, s.Unpublished, rowsPerSecond(l.RowsPerSecond), open, openRows, s.Published.Rows, ago(l.Time, s.Published.LastAt))

	fmt.Fprintln(tw, "\nPARTITION\tLAG\tUNPUBLISHED")
	for _, p := range statusPartitions(s) {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", p, figure(s.PartitionLag, p), figure(s.PartitionUnpublished, p))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "LAG = latest − current, not read yet; UNPUBLISHED = current − committed, read and not published yet")
	fmt.Fprintln(w, offsetsRead(l.freshStatus))
	if len(s.RecentErrors) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nrecent errors")
	for _, e := range s.RecentErrors[max(len(s.RecentErrors)-watchErrors, 0):] {
		fmt.Fprintf(w, "  %s  %s\n", e.Time.UTC().Format(time.RFC3339), e.Message)
	}
	return nil
}

// openSequences counts the groups' open sequences and the rows read into
// them (sequences closed and publishing are not counted).
func openSequences(s workflows.SupervisorStatus) (n int, rows int64) {
	for _, g := range s.Groups {
		for _, q := range g.Sequences {
			if q.Open() {
				n++
				rows += q.Rows
			}
		}
	}
	return n, rows
}

func rowsPerSecond(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'f', 1, 64)
}

// ago says how long before now t was: "12s ago", "3m05s ago", "2h10m ago",
// "3d ago"; "never" for the zero time.
func ago(now, t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := max(now.Sub(t), 0).Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds ago", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm ago", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd ago", int(d.Hours())/24)
}

// isTerminal reports whether w is a terminal: a writer that says so (as in
// tests), or a character device; pipes and files are not. It does without
// golang.org/x/term.
func isTerminal(w io.Writer) bool {
	if t, ok := w.(interface{ IsTerminal() bool }); ok {
		return t.IsTerminal()
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// watchLine is one refresh of a watch: a line in text mode off a terminal,
// the status with its time and read rate in json mode.
type watchLine struct {
	freshStatus
	// RowsPerSecond is the rate of Read.Rows since the previous refresh;
	// null on the first.
	RowsPerSecond *float64 `json:"rowsPerSecond"`
}

func (l watchLine) writeText(w io.Writer) error {
	last := "last " + ago(l.Time, l.Published.LastAt)
	if l.Published.LastAt.IsZero() {
		last = "none yet"
	}
	_, err := fmt.Fprintf(w, "%s %s lag=%d unpublished=%d rows/s=%s published=%d rows, %s\n",
		l.Time.Format(time.RFC3339), l.State, l.Lag, l.Unpublished, rowsPerSecond(l.RowsPerSecond), l.Published.Rows, last)
	return err
}
