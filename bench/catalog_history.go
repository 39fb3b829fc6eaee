package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"path"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"handoff/internal/lake"
	"handoff/internal/storage"
)

// extendHistory makes the table's current metadata keep n snapshots, at
// the size n publications leave while the retention keeps them all,
// without the hour n real publications take on this machine (each one
// rewrites the whole metadata: docs/BENCHMARKS.md, tablegrowth). The real
// snapshots stay as they are, the current one current; before them come
// copies of them, each with a fresh id, an older time and its original's
// sequence number and manifest list, in a lineage of their own that no
// branch references (as snapshots left behind by a rollback are), with
// their snapshot-log entries. The file is written to deep storage beside
// the others and swapped in by compare-and-swap of metadata_location, as
// a commit does; iceberg-go must parse it back with n snapshots.
func extendHistory(ctx context.Context, pool *pgxpool.Pool, deep storage.Store, ds string, n int) (loc string, size int, err error) {
	prev, err := lake.NewCatalogRows(pool, lake.DefaultCatalog).MetadataLocation(ctx, lake.DefaultNamespace, ds)
	if err != nil || prev == "" {
		return "", 0, fmt.Errorf("table %s: %q, %w", ds, prev, err)
	}
	raw, err := readURI(ctx, deep, prev)
	if err != nil {
		return "", 0, err
	}
	var meta map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // ids are int64: no float64 on the way
	if err := dec.Decode(&meta); err != nil {
		return "", 0, fmt.Errorf("parse %s: %w", prev, err)
	}
	var snaps []map[string]any
	if err := unmarshalNumbers(meta["snapshots"], &snaps); err != nil || len(snaps) == 0 {
		return "", 0, fmt.Errorf("snapshots of %s: %d, %v", prev, len(snaps), err)
	}
	if n <= len(snaps) {
		return prev, len(raw), nil
	}
	var log []map[string]any
	if err := unmarshalNumbers(meta["snapshot-log"], &log); err != nil {
		return "", 0, fmt.Errorf("snapshot-log of %s: %w", prev, err)
	}
	first, err := strconv.ParseInt(fmt.Sprint(snaps[0]["timestamp-ms"]), 10, 64)
	if err != nil {
		return "", 0, fmt.Errorf("timestamp-ms of %s's first snapshot: %w", prev, err)
	}
	ids := map[string]bool{}
	for _, s := range snaps {
		ids[fmt.Sprint(s["snapshot-id"])] = true
	}
	copies := n - len(snaps)
	extra := make([]map[string]any, 0, copies)
	extraLog := make([]map[string]any, 0, copies)
	var parent json.Number
	for i := range copies {
		c := make(map[string]any, len(snaps[i%len(snaps)]))
		for k, v := range snaps[i%len(snaps)] {
			c[k] = v
		}
		id := json.Number(strconv.FormatInt(rand.Int64(), 10))
		for ids[id.String()] {
			id = json.Number(strconv.FormatInt(rand.Int64(), 10))
		}
		ids[id.String()] = true
		at := json.Number(strconv.FormatInt(first-int64(copies-i)*1000, 10))
		c["snapshot-id"], c["timestamp-ms"] = id, at
		delete(c, "parent-snapshot-id")
		if parent != "" {
			c["parent-snapshot-id"] = parent
		}
		parent = id
		extra = append(extra, c)
		extraLog = append(extraLog, map[string]any{"snapshot-id": id, "timestamp-ms": at})
	}
	if meta["snapshots"], err = json.Marshal(append(extra, snaps...)); err != nil {
		return "", 0, err
	}
	if meta["snapshot-log"], err = json.Marshal(append(extraLog, log...)); err != nil {
		return "", 0, err
	}
	out, err := json.Marshal(meta)
	if err != nil {
		return "", 0, err
	}
	parsed, err := table.ParseMetadataBytes(out)
	if err != nil {
		return "", 0, fmt.Errorf("iceberg-go does not parse the extended metadata: %w", err)
	}
	if got := len(parsed.Snapshots()); got != n {
		return "", 0, fmt.Errorf("extended metadata has %d snapshots, want %d", got, n)
	}
	key, err := storage.KeyOf(deep, prev)
	if err != nil {
		return "", 0, err
	}
	version, _, _ := strings.Cut(path.Base(key), "-")
	v, _ := strconv.Atoi(version)
	key = path.Join(path.Dir(key), fmt.Sprintf("%05d-%s.metadata.json", v+1, uuid.New()))
	if err := deep.Put(ctx, key, func(w io.Writer) error { _, err := w.Write(out); return err }); err != nil {
		return "", 0, err
	}
	loc = deep.URI(key)
	tag, err := pool.Exec(ctx, `UPDATE iceberg_tables SET metadata_location = $1, previous_metadata_location = $2
		WHERE catalog_name = $3 AND table_namespace = $4 AND table_name = $5 AND metadata_location = $2`,
		loc, prev, lake.DefaultCatalog, lake.DefaultNamespace, ds)
	if err != nil {
		return "", 0, fmt.Errorf("swap metadata of %s: %w", ds, err)
	}
	if tag.RowsAffected() != 1 {
		return "", 0, fmt.Errorf("swap metadata of %s: it moved from %s", ds, prev)
	}
	return loc, len(out), nil
}

func unmarshalNumbers(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
}

// readURI reads the file at a deep storage URI.
func readURI(ctx context.Context, deep storage.Store, uri string) ([]byte, error) {
	key, err := storage.KeyOf(deep, uri)
	if err != nil {
		return nil, err
	}
	rc, err := deep.Open(ctx, key)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}
