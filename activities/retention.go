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
	"handoff/internal/lifecycle"
	"handoff/internal/pgstore"
	"handoff/internal/protocol"
)

// ApplyRetention drops the used segments the datasource's retention rules
// in force drop now, in one transaction with the Iceberg delete snapshot
// of their files when the datasource has a table; then it kills the
// unused segments past the rules' kill grace period and sweeps the files
// nothing lists, older than that grace and at least
// lifecycle.MinSweepGrace (lifecycle.Killer).
// Without rules nothing is dropped and the kill keeps the default grace.
func (a *Activities) ApplyRetention(ctx context.Context, in protocol.ApplyRetentionInput) (protocol.ApplyRetentionResult, error) {
	rec, ok, err := a.Store.RetentionRules(ctx, in.DataSource)
	if err != nil {
		return protocol.ApplyRetentionResult{}, err
	}
	rules := domain.RetentionRules{DataSource: in.DataSource}
	var res protocol.ApplyRetentionResult
	if ok {
		if rules, err = domain.ParseRetentionRules(rec.Config); err != nil {
			return protocol.ApplyRetentionResult{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("retention rules version %d of datasource %s: %v", rec.Version, in.DataSource, err), domain.ErrInvalidSpec, nil)
		}
		res.HasRules, res.Version = true, rec.Version
		if res.Dropped, err = a.dropByRules(ctx, in.DataSource, rules, rec.Version); err != nil {
			return protocol.ApplyRetentionResult{}, err
		}
	}
	k := lifecycle.Killer{Store: a.Store, Deep: a.Deep, Tables: a.Tables, Staging: a.Staging}
	killed, err := k.Kill(ctx, in.DataSource, rules.KillGrace(), false)
	if err != nil {
		return protocol.ApplyRetentionResult{}, err
	}
	res.Killed, res.KilledBytes = len(killed.Killed), killed.Bytes
	swept, err := k.Sweep(ctx, in.DataSource, max(rules.KillGrace(), lifecycle.MinSweepGrace), false)
	if err != nil {
		return protocol.ApplyRetentionResult{}, err
	}
	res.Swept, res.SweptBytes = len(swept.Deleted), swept.Bytes
	if a.Metrics != nil {
		a.Metrics.Retained(in.DataSource, res.Dropped, res.Killed, res.KilledBytes, res.Swept, res.SweptBytes)
	}
	return res, nil
}

// dropByRules drops what rules drop now.
func (a *Activities) dropByRules(ctx context.Context, ds string, rules domain.RetentionRules, version int) (int, error) {
	used, err := a.Store.Segments(ctx, ds)
	if err != nil {
		return 0, err
	}
	now := time.Now()
	by := "v" + strconv.Itoa(version)
	d := pgstore.Drop{DataSource: ds, By: by}
	for _, s := range used {
		if rules.Drops(s.IntervalStart, s.IntervalEnd, now) {
			d.IDs = append(d.IDs, s.ID)
		}
	}
	if len(d.IDs) == 0 {
		return 0, nil
	}
	if a.Tables != nil {
		d.Table = func(ctx context.Context, tx pgx.Tx, uris []string) error {
			_, err := a.Tables.ReplaceInTx(ctx, tx, lake.Replace{DataSource: ds, Name: "retention/" + by, Removed: uris})
			if errors.Is(err, lake.ErrNoTable) {
				return nil
			}
			return err
		}
	}
	return a.Store.DropSegments(ctx, d)
}
