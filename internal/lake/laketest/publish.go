package laketest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"handoff/internal/domain"
	"handoff/internal/lake"
	"handoff/internal/pgstore"
	"handoff/internal/segment"
	"handoff/internal/storage"
)

// Publisher commits publications to one datasource as the publish
// activity does, without Kafka, Temporal or a worker: each one writes a
// segment to deep storage with the table's field ids (lake.Ensure), then
// runs pgstore.Publish with lake.CommitInTx inside its transaction, so
// each is one snapshot whose summary carries the offsets, committed with
// them. Rows are ids "<sequence name>-<i>" (dimension "id") on one
// partition of topic DataSource, one minute of event time each.
type Publisher struct {
	Store      *pgstore.Store
	Lake       *lake.Lake
	Deep       storage.Store
	DataSource string
	// Scratch is a directory for the segment before it is put.
	Scratch string

	next int64 // the partition's next offset
	seq  int
}

// PublisherSchema is the datasource's: dimensions id and page, metric count.
var PublisherSchema = domain.Schema{
	Dims:    []domain.Column{{Name: "id", Type: domain.TypeString}, {Name: "page", Type: domain.TypeString}},
	Metrics: []domain.MetricSpec{{Type: domain.MetricCount, Name: "count"}},
}

var publisherStart = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// Publish commits the next publication of rows rows and returns their ids.
func (p *Publisher) Publish(ctx context.Context, rows int) ([]string, error) {
	ids, _, err := p.publish(ctx, rows, false)
	return ids, err
}

// errRolledBack fails a publication on purpose.
var errRolledBack = errors.New("publication failed on purpose after its table commit")

// PublishRolledBack runs the next publication's transaction up to and
// including the table commit (the new metadata file written, the pointer
// swapped inside the transaction) and then fails it, as a publish that
// fails after its table step does: the transaction rolls back, the
// metadata file stays, referenced by nothing committed. It returns that
// file's location.
func (p *Publisher) PublishRolledBack(ctx context.Context, rows int) (string, error) {
	_, orphan, err := p.publish(ctx, rows, true)
	if !errors.Is(err, errRolledBack) {
		return "", fmt.Errorf("publication meant to roll back: %w", err)
	}
	return orphan, nil
}

func (p *Publisher) publish(ctx context.Context, rows int, fail bool) (ids []string, orphan string, err error) {
	ds := p.DataSource
	fieldIDs, err := p.Lake.Ensure(ctx, ds, PublisherSchema, domain.GranularityHour)
	if err != nil {
		return nil, "", err
	}
	p.seq++
	name := domain.SequenceName(ds, 0, p.seq)
	at := publisherStart.Add(time.Duration(p.seq) * time.Minute)
	hour := at.Truncate(time.Hour)
	path := filepath.Join(p.Scratch, name+".parquet")
	defer os.Remove(path)
	f, err := os.Create(path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	w, err := segment.NewWriterWithFieldIDs(f, PublisherSchema, fieldIDs)
	if err != nil {
		return nil, "", err
	}
	out := make([]string, rows)
	for i := range rows {
		out[i] = name + "-" + strconv.Itoa(i)
		row := domain.Row{Time: at.Add(time.Duration(i) * time.Millisecond).UnixMilli(),
			Dims: []domain.Value{domain.StringValue(out[i]), domain.StringValue("p")}, Metrics: []domain.Value{domain.LongValue(1)}}
		if err := w.Write(row); err != nil {
			return nil, "", err
		}
	}
	info, err := w.Close()
	if err != nil {
		return nil, "", err
	}
	footer, err := lake.ReadFooter(path)
	if err != nil {
		return nil, "", err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, "", err
	}
	key := fmt.Sprintf("%s/%s/%s.parquet", ds, hour.Format("20060102T15"), name)
	if err := p.Deep.Put(ctx, key, func(w io.Writer) error { _, err := io.Copy(w, f); return err }); err != nil {
		return nil, "", err
	}
	start, end := domain.Offsets{domain.P(0): p.next}, domain.Offsets{domain.P(0): p.next + int64(rows)}
	uri := p.Deep.URI(key)
	_, err = p.Store.Publish(ctx, pgstore.Publication{
		SequenceName: name, SupervisorID: ds, DataSource: ds, Topic: ds, SequenceID: p.seq,
		Start: start, End: end, Rows: info.Rows,
		Segments: []pgstore.Segment{{ID: ds + "_" + name, DataSource: ds, IntervalStart: hour, IntervalEnd: hour.Add(time.Hour),
			Version: name, SequenceName: name, Rows: info.Rows, Bytes: info.Bytes, URI: uri, Checksum: info.Checksum}},
		Table: func(ctx context.Context, tx pgx.Tx, after domain.Offsets) error {
			c, err := p.Lake.CommitInTx(ctx, tx, lake.Append{DataSource: ds, Files: []lake.File{{URI: uri, Footer: footer}},
				Summary: map[string]string{lake.SummarySupervisor: ds, lake.SummarySequence: name, lake.SummaryTopic: ds,
					lake.SummaryOffsets: offsetsJSON(after)}})
			if err == nil && fail {
				orphan, err = c.MetadataLocation, errRolledBack
			}
			return err
		},
	})
	if err != nil {
		p.seq-- // the next publication takes its place
		return nil, orphan, err
	}
	p.next += int64(rows)
	return out, "", nil
}

func offsetsJSON(o domain.Offsets) string {
	b, _ := json.Marshal(o)
	return string(b)
}
