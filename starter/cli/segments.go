package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"handoff/internal/domain"
	"handoff/internal/pgstore"
)

func (a *app) segmentsCommand() *cobra.Command {
	var dbURL, dataSource, intervalFlag string
	cmd := &cobra.Command{
		Use:   "segments ID | --datasource DS [--interval START/END]",
		Short: "List a datasource's used segments: interval, rows, size, sequence, file",
		Long: `segments reads from the metadata database the used segments of a datasource,
ordered by interval: in text a table with each segment's interval (UTC),
rows, size, the sequence that published it and its file, then the totals; in
json every field of each segment.

Give either a supervisor ID or --datasource. With an ID the datasource is the
one the supervisor reports in its status or, when Temporal is unreachable or
the supervisor is not running (or does not answer), the one of the latest
spec it accepted.

--interval START/END keeps the segments that overlap it. START and END are
ISO-8601 instants (2024-05-01T00:00:00Z, 2024-05-01T02:00+02:00); a date
means its midnight and a time without a zone is UTC.`,
		Example: `  starter segments orders --database-url postgres://handoff:handoff@localhost:5432/handoff
  starter segments --datasource orders_ds --interval 2024-05-01T00:00:00Z/2024-05-02T00:00:00Z
  DATABASE_URL=postgres://localhost/handoff starter segments orders -o json | jq -r '.[].uri'`,
		Args: cobra.MaximumNArgs(1),
		RunE: a.action(func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			byDS := cmd.Flags().Changed("datasource")
			switch {
			case len(args) == 1 && byDS:
				return usageErrorf("give a supervisor ID or --datasource, not both")
			case len(args) == 0 && !byDS:
				return usageErrorf("segments needs a supervisor ID or --datasource (e.g. %s orders)", cmd.CommandPath())
			case byDS && strings.TrimSpace(dataSource) == "":
				return usageErrorf("--datasource is empty")
			case len(args) == 1:
				if err := validID(args[0]); err != nil {
					return err
				}
			case byDS:
				if err := domain.ValidateName("--datasource", dataSource); err != nil {
					return usageErrorf("%v", err)
				}
			}
			var iv *interval
			if intervalFlag != "" {
				v, err := parseInterval(intervalFlag)
				if err != nil {
					return usageErrorf("--interval %q: %v", intervalFlag, err)
				}
				iv = &v
			}
			var res segmentsResult
			err := a.withPool(ctx, dbURL, func(pool *pgxpool.Pool) error {
				store := pgstore.New(pool)
				ds := dataSource
				if len(args) == 1 {
					var err error
					if ds, err = a.supervisorDataSource(ctx, store, args[0]); err != nil {
						return err
					}
				}
				segs, err := store.Segments(ctx, ds)
				if err != nil {
					return err
				}
				res = newSegmentsResult(ds, iv, segs)
				return nil
			})
			if err != nil {
				return err
			}
			return a.out.print(res)
		}),
	}
	cmd.Flags().StringVar(&dataSource, "datasource", "", "list the segments of this datasource (instead of a supervisor's)")
	cmd.Flags().StringVar(&intervalFlag, "interval", "", "keep the segments overlapping START/END (ISO-8601 instants)")
	cmd.Flags().StringVar(&dbURL, "database-url", "", "Postgres URL of the metadata database")
	bindEnv(cmd.Flags(), "database-url", "DATABASE_URL")
	return cmd
}

// supervisorDataSource is the datasource a supervisor writes: the one its
// status reports or, when Temporal is unreachable or the supervisor does not
// answer, the one of the latest spec it accepted.
func (a *app) supervisorDataSource(ctx context.Context, store *pgstore.Store, id string) (string, error) {
	c, err := a.temporal(ctx)
	var notFound error // the supervisor does not exist, as Temporal says it
	if err != nil {
		a.log.Debug("using the datasource of the latest recorded spec", "supervisor", id, "err", err)
	} else {
		st, err := queryStatus(ctx, c, id, listQueryTimeout)
		switch {
		case err == nil && st.DataSource != "":
			return st.DataSource, nil
		case ctx.Err() != nil:
			return "", ctx.Err()
		case err != nil && exitCode(err, true) == ExitNotFound:
			notFound = err
		case err != nil:
			a.log.Warn("cannot query the supervisor; using the datasource of its latest recorded spec", "supervisor", id, "err", err)
		}
	}
	recs, err := store.SpecHistory(ctx, id)
	if err != nil {
		return "", err
	}
	if len(recs) == 0 {
		if notFound != nil {
			return "", notFound
		}
		return "", supervisorNotFound(ctx, c, id)
	}
	latest := recs[len(recs)-1]
	var spec struct {
		DataSchema struct {
			DataSource string `json:"dataSource"`
		} `json:"dataSchema"`
	}
	if err := json.Unmarshal(latest.Spec, &spec); err != nil || spec.DataSchema.DataSource == "" {
		return "", fmt.Errorf("the latest recorded spec of supervisor %q (version %d) names no dataSchema.dataSource: use --datasource", id, latest.Version)
	}
	return spec.DataSchema.DataSource, nil
}

// interval is a half-open time range [Start, End).
type interval struct{ Start, End time.Time }

func (iv interval) overlaps(start, end time.Time) bool {
	return start.Before(iv.End) && end.After(iv.Start)
}

func (iv interval) String() string { return compactInterval(iv.Start, iv.End) }

// parseInterval parses START/END. END may leave out the date when START has
// one with a time (2024-05-01T10:00Z/11:00Z), as ISO 8601 allows and as
// segments prints intervals.
func parseInterval(s string) (interval, error) {
	startS, endS, ok := strings.Cut(s, "/")
	if !ok || strings.Contains(endS, "/") {
		return interval{}, fmt.Errorf("want START/END, e.g. 2024-05-01T00:00:00Z/2024-05-02T00:00:00Z")
	}
	start, err := parseInstant(startS)
	if err != nil {
		return interval{}, fmt.Errorf("start: %w", err)
	}
	if date, _, hasTime := strings.Cut(startS, "T"); hasTime && len(endS) > 2 && endS[2] == ':' {
		endS = date + "T" + endS
	}
	end, err := parseInstant(endS)
	if err != nil {
		return interval{}, fmt.Errorf("end: %w", err)
	}
	if !start.Before(end) {
		return interval{}, fmt.Errorf("the start is not before the end")
	}
	return interval{start.UTC(), end.UTC()}, nil
}

// instantLayouts are the accepted forms of an instant; fractional seconds
// are accepted after the seconds of any of them. Those without a zone are
// UTC.
var instantLayouts = []string{
	time.RFC3339,
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04:05",
	"2006-01-02T15:04",
	time.DateOnly,
}

func parseInstant(s string) (time.Time, error) {
	for _, layout := range instantLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not an ISO-8601 instant such as 2024-05-01T00:00:00Z", s)
}

// compactInterval writes an interval in UTC as short as ISO 8601 allows:
// whole days as dates, otherwise no zero seconds and no end date when the
// end falls on the start's day.
func compactInterval(start, end time.Time) string {
	s, e := start.UTC(), end.UTC()
	if midnight(s) && midnight(e) {
		return s.Format(time.DateOnly) + "/" + e.Format(time.DateOnly)
	}
	out := s.Format("2006-01-02T") + clock(s) + "/"
	if s.Format(time.DateOnly) != e.Format(time.DateOnly) {
		out += e.Format("2006-01-02T")
	}
	return out + clock(e)
}

func midnight(t time.Time) bool { return t.Equal(t.Truncate(24 * time.Hour)) }

func clock(t time.Time) string {
	switch {
	case t.Nanosecond() != 0:
		return t.Format("15:04:05.999999999Z")
	case t.Second() != 0:
		return t.Format("15:04:05Z")
	}
	return t.Format("15:04Z")
}

// humanBytes writes a size in B, KiB, MiB, GiB... with one decimal.
func humanBytes(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	v, unit := float64(n)/1024, 0
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	for v >= 1024-0.05 && unit < len(units)-1 { // no "1024.0 KiB"
		v /= 1024
		unit++
	}
	return fmt.Sprintf("%.1f %s", v, units[unit])
}

// segmentRecord is a pgstore.Segment as segments prints it in json.
type segmentRecord struct {
	ID            string    `json:"id"`
	DataSource    string    `json:"dataSource"`
	IntervalStart time.Time `json:"intervalStart"`
	IntervalEnd   time.Time `json:"intervalEnd"`
	Version       string    `json:"version"`
	SequenceName  string    `json:"sequenceName"`
	Rows          int64     `json:"rows"`
	Bytes         int64     `json:"bytes"`
	URI           string    `json:"uri"`
	Checksum      string    `json:"checksum"`
}

// segmentsResult prints as a json array of its segments.
type segmentsResult struct {
	dataSource string
	interval   *interval // nil: no --interval
	segments   []segmentRecord
}

func newSegmentsResult(dataSource string, iv *interval, segs []pgstore.Segment) segmentsResult {
	res := segmentsResult{dataSource: dataSource, interval: iv, segments: []segmentRecord{}}
	for _, g := range segs {
		if iv != nil && !iv.overlaps(g.IntervalStart, g.IntervalEnd) {
			continue
		}
		res.segments = append(res.segments, segmentRecord{
			ID: g.ID, DataSource: g.DataSource, IntervalStart: g.IntervalStart.UTC(), IntervalEnd: g.IntervalEnd.UTC(),
			Version: g.Version, SequenceName: g.SequenceName, Rows: g.Rows, Bytes: g.Bytes, URI: g.URI, Checksum: g.Checksum,
		})
	}
	return res
}

func (r segmentsResult) MarshalJSON() ([]byte, error) { return json.Marshal(r.segments) }

func (r segmentsResult) writeText(w io.Writer) error {
	where := "datasource " + r.dataSource
	if r.interval != nil {
		where += " overlapping " + r.interval.String()
	}
	if len(r.segments) == 0 {
		_, err := fmt.Fprintf(w, "no used segments in %s\n", where)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "INTERVAL\tROWS\tSIZE\tSEQUENCE\tURI")
	var rows, bytes int64
	for _, g := range r.segments {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", compactInterval(g.IntervalStart, g.IntervalEnd), g.Rows, humanBytes(g.Bytes), g.SequenceName, g.URI)
		rows += g.Rows
		bytes += g.Bytes
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "total: %s, %d rows, %s (%d bytes) in %s\n",
		plural(len(r.segments), "segment"), rows, humanBytes(bytes), bytes, where)
	return err
}
