package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"go.temporal.io/sdk/temporal"

	"handoff/internal/domain"
	"handoff/internal/lake"
	"handoff/internal/protocol"
	"handoff/internal/segment"
)

// tableFieldIDs makes the datasource's Iceberg table ready for a sequence
// whose segments carry schema and returns the field ids they are written
// with; nil when the sequence does not go to a table: the worker has no
// tables, the spec turned them off, or the datasource published segments
// before it had a table (`starter table create` builds it; until then its
// publishes go on without one, and `starter table` says so).
//
// awaited reports the last case: the publish must then make sure, in its
// transaction, that no table appeared meanwhile (lake.NoTableInTx).
func (a *Activities) tableFieldIDs(ctx context.Context, in protocol.PublishInput, schema domain.Schema, run *running) (ids segment.FieldIDs, awaited bool, err error) {
	if a.Tables == nil || !in.Spec.IOConfig.TableOn() {
		return nil, false, nil
	}
	ds := in.Spec.DataSchema.DataSource
	ids, err = a.Tables.Ensure(ctx, ds, schema, in.Spec.DataSchema.GranularitySpec.SegmentGranularity)
	var schemaErr *lake.SchemaError
	switch {
	case errors.Is(err, lake.ErrNotCreated):
		run.log.Warn("publishing without an Iceberg table", "datasource", ds, "reason", err)
		return nil, true, nil
	case errors.As(err, &schemaErr):
		return nil, false, temporal.NewNonRetryableApplicationError("sequence "+domain.SequenceName(in.Spec.ID, in.Group, in.SequenceID)+": "+err.Error(), domain.ErrTableSchema, nil)
	case err != nil:
		return nil, false, fmt.Errorf("sequence %s: %w", domain.SequenceName(in.Spec.ID, in.Group, in.SequenceID), err)
	}
	return ids, false, nil
}

// tableAwaited is the table half of a publication that goes without a
// table: it fails (and the publish retries, now with the table) if
// `starter table create` made one since the publish was prepared, so no
// sequence is left out of a table built from the segments before it.
func (a *Activities) tableAwaited(ds string) func(context.Context, pgx.Tx, domain.Offsets) error {
	return func(ctx context.Context, tx pgx.Tx, _ domain.Offsets) error {
		return a.Tables.NoTableInTx(ctx, tx, ds)
	}
}

// tableCommit is the table half of a publication: one append snapshot of
// the sequence's files whose summary says what they hold, run inside the
// publish transaction.
func (a *Activities) tableCommit(in protocol.PublishInput, name string, files []lake.File) func(context.Context, pgx.Tx, domain.Offsets) error {
	return func(ctx context.Context, tx pgx.Tx, after domain.Offsets) error {
		summary := map[string]string{
			lake.SummarySupervisor:   in.Spec.ID,
			lake.SummarySequence:     name,
			lake.SummaryTaskGroup:    strconv.Itoa(in.Group),
			lake.SummaryTopic:        in.Spec.IOConfig.Source(),
			lake.SummaryStartOffsets: offsetsJSON(in.Start),
			lake.SummaryEndOffsets:   offsetsJSON(in.End),
			lake.SummaryOffsets:      offsetsJSON(after),
		}
		_, err := a.Tables.CommitInTx(ctx, tx, lake.Append{DataSource: in.Spec.DataSchema.DataSource, Files: files, Summary: summary})
		return err
	}
}

func offsetsJSON(o domain.Offsets) string {
	b, _ := json.Marshal(o)
	return string(b)
}

// maintainTimeout bounds one maintenance pass.
const maintainTimeout = 10 * time.Minute

// maintainTable expires old snapshots and sweeps unreferenced metadata
// files when due, in the background: the publication is committed and
// its answer need not wait. A failure here costs storage, not
// correctness, and a later publish tries again.
func (a *Activities) maintainTable(ctx context.Context, log *slog.Logger, ds string) {
	go func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), maintainTimeout)
		defer cancel()
		if err := a.Tables.MaintainIfDue(ctx, ds); err != nil {
			log.Warn("table maintenance", "datasource", ds, "error", err)
		}
	}()
}
