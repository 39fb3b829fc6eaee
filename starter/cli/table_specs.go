package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"handoff/internal/domain"
	"handoff/internal/pgstore"
)

// writerSpec is what table needs of a supervisor's latest recorded spec.
type writerSpec struct {
	Supervisor  string
	Version     int
	DataSource  string
	TableOn     bool               // ioConfig.icebergTable, default true
	Granularity domain.Granularity // dataSchema.granularitySpec.segmentGranularity; "" when unset
}

func parseWriterSpec(id string, version int, raw []byte) (writerSpec, error) {
	var spec struct {
		DataSchema struct {
			DataSource      string `json:"dataSource"`
			GranularitySpec struct {
				SegmentGranularity domain.Granularity `json:"segmentGranularity"`
			} `json:"granularitySpec"`
		} `json:"dataSchema"`
		IOConfig struct {
			IcebergTable *bool `json:"icebergTable"`
		} `json:"ioConfig"`
	}
	if err := json.Unmarshal(raw, &spec); err != nil {
		return writerSpec{}, fmt.Errorf("the latest recorded spec of supervisor %q (version %d): %w", id, version, err)
	}
	return writerSpec{
		Supervisor: id, Version: version, DataSource: spec.DataSchema.DataSource,
		TableOn: domain.IOConfig{IcebergTable: spec.IOConfig.IcebergTable}.TableOn(), Granularity: spec.DataSchema.GranularitySpec.SegmentGranularity,
	}, nil
}

// supervisorSpec is the latest recorded spec of supervisor id; a
// supervisor with none is not found.
func (a *app) supervisorSpec(ctx context.Context, store *pgstore.Store, id string) (writerSpec, error) {
	recs, err := store.SpecHistory(ctx, id)
	if err != nil {
		return writerSpec{}, err
	}
	if len(recs) == 0 {
		return writerSpec{}, a.unknownSupervisor(ctx, id)
	}
	latest := recs[len(recs)-1]
	w, err := parseWriterSpec(id, latest.Version, latest.Spec)
	if err != nil {
		return writerSpec{}, err
	}
	if w.DataSource == "" {
		return writerSpec{}, fmt.Errorf("the latest recorded spec of supervisor %q (version %d) names no dataSchema.dataSource: use --datasource", id, latest.Version)
	}
	return w, nil
}

// writersOf are the latest recorded specs, by supervisor, that write
// datasource ds.
func writersOf(ctx context.Context, pool *pgxpool.Pool, ds string) ([]writerSpec, error) {
	rows, err := pool.Query(ctx, `SELECT s.supervisor_id, s.version, s.spec FROM supervisor_specs s
		WHERE s.version = (SELECT max(l.version) FROM supervisor_specs l WHERE l.supervisor_id = s.supervisor_id)
		AND s.spec->'dataSchema'->>'dataSource' = $1
		ORDER BY s.supervisor_id`, ds)
	if err != nil {
		return nil, fmt.Errorf("read the specs writing datasource %q: %w", ds, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (writerSpec, error) {
		var id string
		var version int
		var raw []byte
		if err := r.Scan(&id, &version, &raw); err != nil {
			return writerSpec{}, err
		}
		return parseWriterSpec(id, version, raw)
	})
	if err != nil {
		return nil, fmt.Errorf("read the specs writing datasource %q: %w", ds, err)
	}
	return out, nil
}

// tableOff is the first of specs that turns the table off, if any.
func tableOff(specs []writerSpec) (writerSpec, bool) {
	for _, s := range specs {
		if !s.TableOn {
			return s, true
		}
	}
	return writerSpec{}, false
}
