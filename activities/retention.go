package activities

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"go.temporal.io/sdk/temporal"

	"handoff/internal/domain"
	"handoff/internal/lake"
	"handoff/internal/pgstore"
	"handoff/internal/protocol"
)

// ApplyRetention drops the used segments the datasource's retention rules
// in force drop now, in one transaction with the Iceberg delete snapshot
// of their files when the datasource has a table.
func (a *Activities) ApplyRetention(ctx context.Context, in protocol.ApplyRetentionInput) (protocol.ApplyRetentionResult, error) {
	rec, ok, err := a.Store.RetentionRules(ctx, in.DataSource)
	if err != nil || !ok {
		return protocol.ApplyRetentionResult{}, err
	}
	rules, err := domain.ParseRetentionRules(rec.Config)
	if err != nil {
		return protocol.ApplyRetentionResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("retention rules version %d of datasource %s: %v", rec.Version, in.DataSource, err), domain.ErrInvalidSpec, nil)
	}
	used, err := a.Store.Segments(ctx, in.DataSource)
	if err != nil {
		return protocol.ApplyRetentionResult{}, err
	}
	now := time.Now()
	by := "v" + strconv.Itoa(rec.Version)
	d := pgstore.Drop{DataSource: in.DataSource, By: by}
	for _, s := range used {
		if rules.Drops(s.IntervalStart, s.IntervalEnd, now) {
			d.IDs = append(d.IDs, s.ID)
		}
	}
	res := protocol.ApplyRetentionResult{HasRules: true, Version: rec.Version}
	if len(d.IDs) == 0 {
		return res, nil
	}
	if a.Tables != nil {
		d.Table = func(ctx context.Context, tx pgx.Tx, uris []string) error {
			_, err := a.Tables.ReplaceInTx(ctx, tx, lake.Replace{DataSource: in.DataSource, Name: "retention/" + by, Removed: uris})
			if errors.Is(err, lake.ErrNoTable) {
				return nil
			}
			return err
		}
	}
	if res.Dropped, err = a.Store.DropSegments(ctx, d); err != nil {
		return protocol.ApplyRetentionResult{}, err
	}
	return res, nil
}
