package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"handoff/internal/pgstore"
)

// versionedDoc is one kind of a datasource's versioned documents in the
// metadata database (its compaction config, its retention rules): the
// workflow compaction/DS reads the latest version of each.
type versionedDoc struct {
	what    string // in messages: "compaction config"
	missing string // the error when the datasource has none, with what to do
	set     func(s *pgstore.Store, ctx context.Context, ds string, doc json.RawMessage) (recorded bool, version int, err error)
	latest  func(s *pgstore.Store, ctx context.Context, ds string) (pgstore.VersionedDoc, bool, error)
}

var (
	compactionConfigDoc = versionedDoc{
		what:    "compaction config",
		missing: "datasource %[1]s has no compaction config: set one with starter compaction set %[1]s -f config.json",
		set:     (*pgstore.Store).SetCompactionConfig,
		latest:  (*pgstore.Store).CompactionConfig,
	}
	retentionRulesDoc = versionedDoc{
		what:    "retention rules",
		missing: "datasource %[1]s has no retention rules (its segments are kept): set them with starter retention set %[1]s -f rules.json",
		set:     (*pgstore.Store).SetRetentionRules,
		latest:  (*pgstore.Store).RetentionRules,
	}
)

// recordedDoc is what setting a versioned document did.
type recordedDoc struct {
	Recorded bool
	Version  int
	RunID    string // of compaction/DS, started or woken
}

// record appends doc as the datasource's next version (unless it equals
// the latest) and starts or wakes compaction/DS, so that it plans with it
// at once. check, when set, runs first and can refuse the document.
func (a *app) record(ctx context.Context, dbURL, ds string, k versionedDoc, doc json.RawMessage, check func(*pgstore.Store) error) (r recordedDoc, err error) {
	err = a.withPool(ctx, dbURL, func(pool *pgxpool.Pool) error {
		s := pgstore.New(pool)
		if check != nil {
			if err := check(s); err != nil {
				return err
			}
		}
		r.Recorded, r.Version, err = k.set(s, ctx, ds, doc)
		return err
	})
	if err != nil {
		return r, err
	}
	r.RunID, err = a.startLifecycle(ctx, ds)
	return r, err
}

// latest returns the datasource's latest version of the document, parsed
// by parse; the datasource having none is an error that says how to set
// one.
func latest[T any](ctx context.Context, a *app, dbURL, ds string, k versionedDoc, parse func([]byte) (T, error)) (rec pgstore.VersionedDoc, doc T, err error) {
	err = a.withPool(ctx, dbURL, func(pool *pgxpool.Pool) error {
		var ok bool
		rec, ok, err = k.latest(pgstore.New(pool), ctx, ds)
		switch {
		case err != nil:
			return err
		case !ok:
			return fmt.Errorf(k.missing, ds)
		}
		if doc, err = parse(rec.Config); err != nil {
			return fmt.Errorf("%s version %d of %s: %w", k.what, rec.Version, ds, err)
		}
		return nil
	})
	return rec, doc, err
}
