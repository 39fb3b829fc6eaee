package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"handoff/internal/lake"
)

// Why a datasource has no table (tableResult.Reason).
const (
	reasonTableOff        = "icebergTableOff"
	reasonSegmentsNoTable = "segmentsWithoutTable"
	reasonNothing         = "nothingPublished"
)

// tableResult is what table prints: the description, and when there is
// no table the reason (a code) and a message saying what to do; notes
// flag what looks wrong about a table that exists.
type tableResult struct {
	lake.Description
	Supervisor string   `json:"supervisor,omitempty"` // the ID asked about
	Reason     string   `json:"reason,omitempty"`
	Message    string   `json:"message,omitempty"`
	Notes      []string `json:"notes,omitempty"`
}

func newTableResult(d lake.Description, specs []writerSpec, supervisor string) tableResult {
	r := tableResult{Description: d, Supervisor: supervisor}
	off, isOff := tableOff(specs)
	offMsg := fmt.Sprintf("supervisor %s's spec (version %d) sets ioConfig.icebergTable false", off.Supervisor, off.Version)
	switch {
	case d.Exists && isOff:
		r.Notes = append(r.Notes, offMsg+": its publishes do not reach this table")
	case !d.Exists && isOff:
		r.Reason, r.Message = reasonTableOff, offMsg+": its publishes commit no table"
		if d.UsedSegments > 0 {
			r.Message += fmt.Sprintf("; %s published without one: turn it on (starter update), then run `starter table create %s`",
				plural(int(d.UsedSegments), "segment"), d.DataSource)
		}
	case !d.Exists && d.UsedSegments > 0:
		r.Reason = reasonSegmentsNoTable
		r.Message = fmt.Sprintf("datasource %s has %s (%d rows) published without a table: run `starter table create %s` to build it from them",
			d.DataSource, plural(int(d.UsedSegments), "used segment"), d.SegmentRows, d.DataSource)
	case !d.Exists:
		r.Reason = reasonNothing
		r.Message = fmt.Sprintf("datasource %s has published nothing yet: its first publish creates the table", d.DataSource)
	}
	if d.Exists && d.CurrentSnapshotID != 0 && d.Rows != d.SegmentRows {
		r.Notes = append(r.Notes, fmt.Sprintf("the used segments hold %d rows, the table's live files %d", d.SegmentRows, d.Rows))
	}
	return r
}

func (r tableResult) writeText(w io.Writer) error {
	d := r.Description
	if !d.Exists {
		_, err := fmt.Fprintf(w, "no table %s in catalog %s (warehouse %s): %s\n", d.Identifier, d.Catalog, d.Warehouse, r.Message)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "table\t%s in catalog %s\n", d.Identifier, d.Catalog)
	fmt.Fprintf(tw, "warehouse\t%s\n", d.Warehouse)
	fmt.Fprintf(tw, "location\t%s\n", d.Location)
	fmt.Fprintf(tw, "metadata\t%s (format v%d)\n", d.MetadataLocation, d.FormatVersion)
	if d.CurrentSnapshotID != 0 {
		fmt.Fprintf(tw, "snapshot\t%d, %s kept\n", d.CurrentSnapshotID, plural(d.Snapshots, "snapshot"))
	} else {
		fmt.Fprintf(tw, "snapshot\tnone yet\n")
	}
	fmt.Fprintf(tw, "rows\t%d in %s, %s (%d bytes)\n", d.Rows, plural(d.DataFiles, "data file"), humanBytes(d.Bytes), d.Bytes)
	fmt.Fprintf(tw, "segments\t%s, %d rows\n", plural(int(d.UsedSegments), "used segment"), d.SegmentRows)
	fmt.Fprintf(tw, "partitioning\t%s\n", partitioningText(d))
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "COLUMN\tFIELD ID\tTYPE\tREQUIRED\tDOC")
	for _, c := range d.Columns {
		req := "no"
		if c.Required {
			req = "yes"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", c.Name, c.FieldID, c.Type, req, c.Doc)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(d.Recent) > 0 {
		fmt.Fprintf(w, "\nlast %s, newest first:\n", plural(len(d.Recent), "snapshot"))
		tw = tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "TIME\tSNAPSHOT\tSEQUENCE\tGROUP\tSTART\tEND\tADDED ROWS")
		for _, s := range d.Recent {
			seq, start, end := snapshotTexts(s)
			group := "-"
			if s.TaskGroup != nil {
				group = strconv.Itoa(*s.TaskGroup)
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%d\n", s.Time.UTC().Format(time.RFC3339), s.SnapshotID, seq, group, start, end, s.AddedRecords)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	return nil
}

func partitioningText(d lake.Description) string {
	if len(d.Partitioning) == 0 {
		return "none (unpartitioned)"
	}
	parts := make([]string, len(d.Partitioning))
	for i, p := range d.Partitioning {
		parts[i] = fmt.Sprintf("%s(%s) as %s", p.Transform, p.Source, p.Name)
	}
	out := strings.Join(parts, ", ")
	if d.SegmentGranularity != "" {
		out += ", for segmentGranularity " + d.SegmentGranularity
	}
	return out
}

// snapshotTexts are a snapshot's sequence, start and end columns: a
// publish's sequence and offsets; for the snapshot made from segments,
// what it registered and the stored offsets as its end.
func snapshotTexts(s lake.SnapshotInfo) (seq, start, end string) {
	seq, start, end = orDash(s.Sequence), orDash(s.StartOffsets.String()), orDash(s.EndOffsets.String())
	if s.FromSegments > 0 {
		seq = fmt.Sprintf("(from %s)", plural(s.FromSegments, "segment"))
		end = orDash(s.Offsets.String())
		if len(s.TopicOffsets) > 0 {
			var parts []string
			for t, o := range s.TopicOffsets {
				parts = append(parts, t+" "+o.String())
			}
			end = strings.Join(parts, "; ")
		}
	}
	return seq, start, end
}
