package laketest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/jackc/pgx/v5/pgxpool"

	"handoff/internal/domain"
	"handoff/internal/lake"
)

// Report is what Check found.
type Report struct {
	Scan       *Scan
	Lost       []string // ids produced, not in the table
	Duplicated []string // ids in the table more than once
	Unexpected []string // ids in the table never produced
}

// Check reads the datasource through its table and compares it with the
// events runID-0 ... runID-(n-1), each of which must be there once (column
// "id"), and with stored, the datasource_offsets of the topic, which the
// current snapshot's summary must equal. The error names what is wrong.
func Check(ctx context.Context, pool *pgxpool.Pool, cfg lake.Config, ds, runID string, n int64, stored domain.Offsets, props ...iceberg.Properties) (*Report, error) {
	return CheckIDs(ctx, pool, cfg, ds, IDs(runID, n), stored, props...)
}

// IDs is runID-0 ... runID-(n-1).
func IDs(runID string, n int64) []string {
	want := make([]string, n)
	for i := range n {
		want[i] = runID + "-" + strconv.FormatInt(i, 10)
	}
	return want
}

// CheckIDs is Check for any set of event ids (want, each once): those of
// a transactional topic's committed transactions, say.
func CheckIDs(ctx context.Context, pool *pgxpool.Pool, cfg lake.Config, ds string, want []string, stored domain.Offsets, props ...iceberg.Properties) (*Report, error) {
	t, err := Load(ctx, pool, cfg, ds, props...)
	if err != nil {
		return nil, err
	}
	return CheckTableIDs(ctx, t, want, stored)
}

// CheckTable is Check of a table however it was loaded (an SQL or a REST
// catalog).
func CheckTable(ctx context.Context, t *table.Table, runID string, n int64, stored domain.Offsets) (*Report, error) {
	return CheckTableIDs(ctx, t, IDs(runID, n), stored)
}

// CheckTableIDs is CheckTable for any set of event ids.
func CheckTableIDs(ctx context.Context, t *table.Table, want []string, stored domain.Offsets) (*Report, error) {
	n := int64(len(want))
	ds := t.Identifier()[len(t.Identifier())-1]
	scan, err := ReadTable(ctx, t, "id")
	if err != nil {
		return nil, err
	}
	r := &Report{Scan: scan}
	left := maps.Clone(scan.IDs)
	for _, id := range want {
		switch c := left[id]; {
		case c == 0:
			r.Lost = append(r.Lost, id)
		case c > 1:
			r.Duplicated = append(r.Duplicated, id)
		}
		delete(left, id)
	}
	r.Unexpected = slices.Sorted(maps.Keys(left))
	switch {
	case len(r.Lost) > 0:
		return r, fmt.Errorf("table %s: %d of %d events lost, first %v", ds, len(r.Lost), n, first(r.Lost))
	case len(r.Duplicated) > 0:
		return r, fmt.Errorf("table %s: %d events more than once, first %v", ds, len(r.Duplicated), first(r.Duplicated))
	case len(r.Unexpected) > 0:
		return r, fmt.Errorf("table %s: %d rows never produced, first %v", ds, len(r.Unexpected), first(r.Unexpected))
	case scan.Rows != n:
		return r, fmt.Errorf("table %s: %d rows, want %d", ds, scan.Rows, n)
	case len(scan.SharedFiles) > 0:
		return r, fmt.Errorf("table %s: data files in more than one live manifest entry: %v", ds, first(scan.SharedFiles))
	case !scan.Offsets.Equal(stored):
		return r, fmt.Errorf("table %s: the current snapshot's %s is %v, datasource_offsets %v", ds, lake.SummaryOffsets, scan.Offsets, stored)
	}
	return r, nil
}

func first(s []string) []string { return s[:min(len(s), 5)] }
