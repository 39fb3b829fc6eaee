package lake

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"handoff/internal/domain"
)

// Description is what a datasource's table holds, as `starter table`
// shows it. Without a table, Exists is false and only the names, the
// warehouse and the segment figures are set.
type Description struct {
	DataSource string `json:"dataSource"`
	Identifier string `json:"identifier"` // namespace.table
	Catalog    string `json:"catalog"`
	Warehouse  string `json:"warehouse"`
	Exists     bool   `json:"exists"`
	// UsedSegments and SegmentRows are the datasource's used segments in
	// Postgres and their rows, table or not.
	UsedSegments int64 `json:"usedSegments"`
	SegmentRows  int64 `json:"segmentRows"`

	Location           string `json:"location,omitempty"`
	MetadataLocation   string `json:"metadataLocation,omitempty"`
	FormatVersion      int    `json:"formatVersion,omitempty"`
	SegmentGranularity string `json:"segmentGranularity,omitempty"` // what the partition spec is for
	CurrentSnapshotID  int64  `json:"currentSnapshotId,omitempty"`
	// Rows, DataFiles and Bytes sum the live data files of the current
	// snapshot (its manifests' entries).
	Rows         int64           `json:"rows"`
	DataFiles    int             `json:"dataFiles"`
	Bytes        int64           `json:"bytes"`
	Columns      []ColumnInfo    `json:"columns,omitempty"`
	Partitioning []PartitionInfo `json:"partitioning,omitempty"` // empty: unpartitioned
	Snapshots    int             `json:"snapshots"`              // snapshots the table keeps
	// Recent are the last snapshots, newest first.
	Recent []SnapshotInfo `json:"recentSnapshots,omitempty"`
}

// ColumnInfo is a column of the current schema.
type ColumnInfo struct {
	FieldID  int    `json:"fieldId"`
	Name     string `json:"name"`
	Type     string `json:"type"`
	Required bool   `json:"required"`
	Doc      string `json:"doc,omitempty"`
}

// PartitionInfo is a field of the default partition spec.
type PartitionInfo struct {
	FieldID   int    `json:"fieldId"`
	Name      string `json:"name"`
	Source    string `json:"source"`
	Transform string `json:"transform"`
}

// SnapshotInfo is a snapshot and what its summary says.
type SnapshotInfo struct {
	SnapshotID     int64          `json:"snapshotId"`
	SequenceNumber int64          `json:"sequenceNumber"`
	Time           time.Time      `json:"time"`
	Operation      string         `json:"operation,omitempty"`
	Supervisor     string         `json:"supervisor,omitempty"`
	Sequence       string         `json:"sequence,omitempty"`
	TaskGroup      *int           `json:"taskGroup,omitempty"`
	Topic          string         `json:"topic,omitempty"`
	StartOffsets   domain.Offsets `json:"startOffsets,omitempty"`
	EndOffsets     domain.Offsets `json:"endOffsets,omitempty"`
	Offsets        domain.Offsets `json:"offsets,omitempty"` // every partition's next offset once committed
	AddedRecords   int64          `json:"addedRecords"`
	TotalRecords   int64          `json:"totalRecords"`
	// TopicOffsets replaces Offsets when the datasource holds offsets of
	// several topics (a CreateFromSegments snapshot only).
	TopicOffsets map[string]domain.Offsets `json:"topicOffsets,omitempty"`
	// FromSegments is set on the snapshot CreateFromSegments made: how
	// many segments it registered.
	FromSegments int `json:"fromSegments,omitempty"`
}

// Describe reads the datasource's table: its catalog row, current
// metadata and the current snapshot's manifests, and the last
// lastSnapshots snapshots (all when < 0).
func (l *Lake) Describe(ctx context.Context, ds string, lastSnapshots int) (Description, error) {
	d := Description{DataSource: ds, Identifier: l.Identifier(ds), Catalog: l.cfg.Catalog, Warehouse: strings.TrimSuffix(l.Warehouse(), "/")}
	if err := l.pool.QueryRow(ctx, `SELECT count(*), coalesce(sum(rows), 0) FROM segments WHERE datasource = $1 AND used`,
		ds).Scan(&d.UsedSegments, &d.SegmentRows); err != nil {
		return Description{}, fmt.Errorf("count segments of %q: %w", ds, err)
	}
	loc, err := l.pointer(ctx, l.pool, ds, false)
	if err != nil || loc == "" {
		return d, err
	}
	if _, err := newStoreIO(ctx, l.deep).key(loc); err != nil {
		return Description{}, fmt.Errorf("table %s: its metadata %s is outside deep storage %s: give the deep storage the worker publishes to", d.Identifier, loc, d.Warehouse)
	}
	meta, err := l.metadata(ctx, loc)
	if err != nil {
		return Description{}, fmt.Errorf("table %s: %w", d.Identifier, err)
	}
	d.Exists, d.MetadataLocation = true, loc
	d.Location, d.FormatVersion = meta.Location(), meta.Version()
	d.SegmentGranularity = meta.Properties()["handoff.segment-granularity"]
	sc := meta.CurrentSchema()
	for _, f := range sc.Fields() {
		d.Columns = append(d.Columns, ColumnInfo{FieldID: f.ID, Name: f.Name, Type: f.Type.String(), Required: f.Required, Doc: f.Doc})
	}
	spec := meta.PartitionSpec()
	for _, f := range spec.Fields() {
		src, _ := sc.FindColumnName(f.SourceID())
		d.Partitioning = append(d.Partitioning, PartitionInfo{FieldID: f.FieldID, Name: f.Name, Source: src, Transform: f.Transform.String()})
	}
	snaps := meta.Snapshots()
	d.Snapshots = len(snaps)
	if cur := meta.CurrentSnapshot(); cur != nil {
		d.CurrentSnapshotID = cur.SnapshotID
		if err := l.liveFiles(ctx, cur, &d); err != nil {
			return Description{}, err
		}
	}
	recent := slices.Clone(snaps)
	slices.SortStableFunc(recent, func(a, b table.Snapshot) int {
		return cmp.Or(cmp.Compare(b.SequenceNumber, a.SequenceNumber), cmp.Compare(b.TimestampMs, a.TimestampMs))
	})
	if lastSnapshots >= 0 && len(recent) > lastSnapshots {
		recent = recent[:lastSnapshots]
	}
	for _, s := range recent {
		d.Recent = append(d.Recent, snapshotInfo(s))
	}
	return d, nil
}

// liveFiles sums the live data files of snapshot s into d.
func (l *Lake) liveFiles(ctx context.Context, s *table.Snapshot, d *Description) error {
	fs := newStoreIO(ctx, l.deep)
	manifests, err := s.Manifests(fs)
	if err != nil {
		return fmt.Errorf("table %s: read manifest list %s: %w", d.Identifier, s.ManifestList, err)
	}
	for _, m := range manifests {
		if m.ManifestContent() != iceberg.ManifestContentData {
			continue
		}
		entries, err := m.FetchEntries(fs, true)
		if err != nil {
			return fmt.Errorf("table %s: read manifest %s: %w", d.Identifier, m.FilePath(), err)
		}
		for _, e := range entries {
			df := e.DataFile()
			d.Rows += df.Count()
			d.Bytes += df.FileSizeBytes()
			d.DataFiles++
		}
	}
	return nil
}

// snapshotInfo reads a snapshot's summary; a key it cannot parse is left
// out.
func snapshotInfo(s table.Snapshot) SnapshotInfo {
	info := SnapshotInfo{SnapshotID: s.SnapshotID, SequenceNumber: s.SequenceNumber, Time: time.UnixMilli(s.TimestampMs).UTC()}
	if s.Summary == nil {
		return info
	}
	p := s.Summary.Properties
	info.Operation = string(s.Summary.Operation)
	info.Supervisor, info.Sequence, info.Topic = p[SummarySupervisor], p[SummarySequence], p[SummaryTopic]
	if g, err := strconv.Atoi(p[SummaryTaskGroup]); err == nil {
		info.TaskGroup = &g
	}
	info.StartOffsets = parseOffsets(p[SummaryStartOffsets])
	info.EndOffsets = parseOffsets(p[SummaryEndOffsets])
	info.Offsets = parseOffsets(p[SummaryOffsets])
	info.AddedRecords, _ = strconv.ParseInt(p["added-records"], 10, 64)
	info.TotalRecords, _ = strconv.ParseInt(p["total-records"], 10, 64)
	info.FromSegments, _ = strconv.Atoi(p[SummaryFromSegments])
	if js := p[SummaryTopicOffsets]; js != "" {
		_ = json.Unmarshal([]byte(js), &info.TopicOffsets)
	}
	return info
}

func parseOffsets(js string) domain.Offsets {
	if js == "" {
		return nil
	}
	var o domain.Offsets
	if json.Unmarshal([]byte(js), &o) != nil {
		return nil
	}
	return o
}
