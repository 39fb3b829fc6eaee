package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"handoff/internal/domain"
	"handoff/workflows"
)

// writeStatus renders a supervisor's status as a few compact tables.
func writeStatus(w io.Writer, f freshStatus) error {
	s := f.SupervisorStatus
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "supervisor %s  %s  (topic %s → datasource %s%s)\n", s.ID, stateText(s), s.Topic, s.DataSource, isolationText(s))
	if s.PendingSpec {
		fmt.Fprintln(tw, "a new spec applies once the task groups have published their open sequences")
	}

	fmt.Fprintln(tw, "\nPARTITION\tCOMMITTED\tCURRENT\tLATEST\tLAG\tUNPUBLISHED")
	for _, p := range statusPartitions(s) {
		c, hasC := s.Committed[p]
		cur, hasCur := s.Current[p]
		l, hasL := s.Latest[p]
		latest := offset(l, hasL)
		if slices.Contains(s.LatestRaised, p) {
			latest += "*"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", p, offset(c, hasC), offset(cur, hasCur), latest, figure(s.PartitionLag, p), figure(s.PartitionUnpublished, p))
	}
	fmt.Fprintf(tw, "total\t\t\t\t%d\t%d\n", s.Lag, s.Unpublished)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "LAG = LATEST − CURRENT, in Kafka and not read yet; UNPUBLISHED = CURRENT − COMMITTED, read and not published yet")
	if len(s.LatestRaised) > 0 {
		fmt.Fprintln(w, "* the latest offset was read before the group got past it: shown at CURRENT")
	}
	fmt.Fprintln(w, offsetsRead(f))

	fmt.Fprintln(tw, "\nGROUP\tGEN\tPARTITIONS\tRUNNING\tFAILURES\tSEQUENCES")
	for _, g := range s.Groups {
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%d\t%s\n", g.Group, g.Generation, joinPartitions(g.Partitions), yesNo(g.Running), g.Failures, sequences(g.Sequences))
	}

	for _, g := range s.Groups {
		if o := g.OutOfRange; o != nil {
			fmt.Fprintf(tw, "\ngroup %d stopped: partition %d has no offset %d (it holds %d to %d): run `starter reset %s --partition %d=earliest --force` (or =latest), or set ioConfig.resetOffsetAutomatically\n",
				g.Group, o.Partition, o.Offset, o.Earliest, o.Latest, s.ID, o.Partition)
		}
	}
	if a := s.Autoscaler; a != nil {
		fmt.Fprintf(tw, "\n%s\n", a)
	}
	if line := workflows.TopicsLine(s); line != "" {
		fmt.Fprintf(tw, "\n%s\n", line)
	}
	if len(s.OffsetResets) > 0 {
		fmt.Fprintln(tw, "\nOFFSET RESET\tGROUP\tPARTITION\tFROM\tTO\tSKIPPED")
		for _, x := range s.OffsetResets {
			skipped := strconv.FormatInt(x.Skipped, 10)
			if x.Recreated {
				skipped += " (topic recreated)"
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%s\n", x.Time.UTC().Format(time.RFC3339), x.Group, x.Partition, x.From, x.To, skipped)
		}
	}

	for _, h := range s.Held {
		fmt.Fprintf(tw, "\nheld by an open transaction: %s (%s ago): nothing past it is read until that transaction ends (docs/OPERATIONS.md)\n",
			h, statusNow(f).Sub(h.Since).Round(time.Second))
	}
	r, p := s.Read, s.Published
	fmt.Fprintf(tw, "\nread\t%s\n", readText(r))
	fmt.Fprintf(tw, "published\t%s, %s, %d rows\n", plural(p.Sequences, "sequence"), plural(p.Segments, "segment"), p.Rows)
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(s.RecentErrors) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nrecent errors")
	for _, e := range s.RecentErrors {
		fmt.Fprintf(w, "  %s  %s\n", e.Time.UTC().Format(time.RFC3339), e.Message)
	}
	return nil
}

// figure is a partition's lag or unpublished count, "-" when unknown (no
// latest offset, or nothing known of where its group reads).
func figure(m map[domain.Partition]int64, p domain.Partition) string {
	if v, ok := m[p]; ok {
		return strconv.FormatInt(v, 10)
	}
	return "-"
}

// offsetsRead says when and where the latest and current offsets were read.
func offsetsRead(f freshStatus) string {
	var latest string
	switch {
	case f.LatestFrom == latestFromKafka:
		latest = "latest read from Kafka at " + statusTime(f.LatestAt)
	case f.LatestAt.IsZero():
		latest = "latest: the supervisor's last read"
	case f.Time.IsZero():
		latest = "latest: the supervisor's, read at " + statusTime(f.LatestAt)
	default:
		latest = fmt.Sprintf("latest: the supervisor's, read %s (%s)", ago(f.Time, f.LatestAt), statusTime(f.LatestAt))
	}
	if f.KafkaError != "" {
		latest += " (not read from Kafka: " + f.KafkaError + ")"
	}
	current := "current: the supervisor's"
	if !f.HeartbeatAt.IsZero() {
		current = fmt.Sprintf("current: the supervisor's and the consumes' heartbeats, the last at %s", statusTime(f.HeartbeatAt))
	}
	return latest + "; " + current
}

// statusTime is a time as status shows it: RFC 3339 in UTC.
func statusTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// statusPartitions is every partition the status mentions, in order.
func statusPartitions(s workflows.SupervisorStatus) []domain.Partition {
	set := map[domain.Partition]bool{}
	for _, p := range s.Partitions {
		set[p] = true
	}
	for p := range s.Committed {
		set[p] = true
	}
	for p := range s.Current {
		set[p] = true
	}
	for p := range s.Latest {
		set[p] = true
	}
	return slices.SortedFunc(maps.Keys(set), domain.ComparePartitions)
}

func offset(v int64, ok bool) string {
	if !ok {
		return "-"
	}
	return strconv.FormatInt(v, 10)
}

func joinPartitions(ps []domain.Partition) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// sequences lists a group's sequences: open ones with their start, closed
// (not yet published) ones with their end, each with the rows read into it.
func sequences(seqs []workflows.SequenceStatus) string {
	if len(seqs) == 0 {
		return "-"
	}
	s := make([]string, len(seqs))
	for i, q := range seqs {
		if q.Open() {
			s[i] = fmt.Sprintf("#%d open from %s (%d rows)", q.ID, q.Start, q.Rows)
		} else {
			s[i] = fmt.Sprintf("#%d publishing to %s (%d rows)", q.ID, q.End, q.Rows)
		}
	}
	return strings.Join(s, "; ")
}

// isolationText is the isolation level the groups read at ("" from a
// worker that does not report it).
func isolationText(s workflows.SupervisorStatus) string {
	if s.IsolationLevel == "" {
		return ""
	}
	return ", reads " + s.IsolationLevel
}

// readText says what the groups read, and what they passed without a row.
func readText(r workflows.ReadTotals) string {
	t := fmt.Sprintf("%d records, %d rows, %d unparseable, %d thrown away", r.Records, r.Rows, r.Unparseable, r.ThrownAway)
	if r.NoValue > 0 {
		t += fmt.Sprintf(" (%d with a null or empty value)", r.NoValue)
	}
	if r.Markers > 0 || r.Aborted > 0 {
		t += fmt.Sprintf("; passed %d transaction markers and %d records of aborted transactions", r.Markers, r.Aborted)
	}
	return t
}

// statusNow is when the status was asked, or now.
func statusNow(f freshStatus) time.Time {
	if f.Time.IsZero() {
		return time.Now()
	}
	return f.Time
}
