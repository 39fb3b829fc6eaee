package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"handoff/internal/domain"
	"handoff/internal/lake"
	"handoff/internal/lake/laketest"
	"handoff/internal/pgstore"
	"handoff/internal/segment"
	"handoff/internal/storage"
)

// The table-growth phase: how a datasource's Iceberg table metadata grows
// with the publications committed to it, and what the retention bounds.
// It publishes through pgstore.Publish with the table commit inside the
// transaction, as the publish activity does (Ensure, a segment written
// with the table's field ids, lake.CommitInTx, then MaintainIfDue), one
// small segment per publication, one publication a minute of event time
// (60 to an hourly partition), against the bench's Postgres and a local
// deep storage of its own. No worker, Temporal or Kafka.

const (
	growthDataSource = "bench_growth"
	growthSupervisor = "bench-growth"
	growthTopic      = "bench-growth"
	growthRows       = 10 // rows per publication (one segment)
	growthPartitions = 4  // Kafka partitions in each publication's offsets
	// growthWindow is how many publications before a mark its publish
	// times are taken over.
	growthWindow = 100
)

// growthRetention is one run's table configuration.
type growthRetention struct {
	name string // default, short
	cfg  lake.Config
}

func growthRetentions(o options) []growthRetention {
	var out []growthRetention
	if o.growthDefault {
		out = append(out, growthRetention{"default", lake.Config{}})
	}
	if o.growthShortAge > 0 {
		out = append(out, growthRetention{"short", lake.Config{MaxSnapshotAge: o.growthShortAge}})
	}
	return out
}

// tableGrowthRun is one run of the phase: publications up to the largest
// mark under one retention.
type tableGrowthRun struct {
	Retention      string  `json:"retention"`
	MaxSnapshotAge string  `json:"maxSnapshotAge"`
	MinSnapshots   int     `json:"minSnapshots"`
	RowsPerPublish int     `json:"rowsPerPublication"`
	Seconds        float64 `json:"seconds"` // the whole run, measurements included
	// RenewLakeEvery: a new lake.Lake every so many publications (0: one
	// for the whole run, as a worker keeps).
	RenewLakeEvery int `json:"renewLakeEvery"`
	// PeakHeapMiB is the largest live heap seen (checked every 50
	// publications); Stopped says why the run ended before the largest
	// mark, after StoppedAfter publications.
	PeakHeapMiB  float64           `json:"peakHeapMiB"`
	StoppedAfter int               `json:"stoppedAfter,omitempty"`
	Stopped      string            `json:"stopped,omitempty"`
	Marks        []tableGrowthMark `json:"marks"`
}

// tableGrowthMark is the table after a number of publications.
type tableGrowthMark struct {
	Publications int `json:"publications"`
	// What the current metadata keeps.
	Snapshots          int `json:"snapshots"`
	SnapshotLogEntries int `json:"snapshotLogEntries"`
	MetadataLogEntries int `json:"metadataLogEntries"`
	// MetadataBytes is the current metadata JSON file.
	MetadataBytes int64 `json:"metadataBytes"`
	// Everything under <datasource>/metadata/ after the mark's publication
	// and its maintenance pass (if one was due), and before that pass: the
	// most the directory holds between passes.
	MetadataDirFiles                  int   `json:"metadataDirFiles"`
	MetadataDirBytes                  int64 `json:"metadataDirBytes"`
	MetadataDirFilesBeforeMaintenance int   `json:"metadataDirFilesBeforeMaintenance"`
	MetadataDirBytesBeforeMaintenance int64 `json:"metadataDirBytesBeforeMaintenance"`
	// The current snapshot's manifest list and manifests.
	ManifestListBytes int64 `json:"manifestListBytes"`
	Manifests         int   `json:"manifests"`
	ManifestBytes     int64 `json:"manifestBytes"`
	DataFiles         int   `json:"dataFiles"` // the scan planned
	// Loads through iceberg-go's SQL catalog, each with a catalog of its
	// own (no cache): LoadMillis reads the pointer and reads and parses
	// the current metadata, PlanMillis reads the manifest list and the
	// manifests and plans a scan of the current snapshot; medians of
	// -growth-loads loads, TotalMillis the median of their sums.
	LoadMillis float64 `json:"loadMillis"`
	// RESTLoadMillis is loadTable through the Iceberg REST catalog server,
	// its cache cold (restLoadMillis); median.
	RESTLoadMillis float64 `json:"restLoadMillis"`
	PlanMillis     float64 `json:"planMillis"`
	TotalMillis    float64 `json:"totalMillis"`
	// ColdMetadataMillis: a new lake.Lake, as a worker after a restart
	// (cold cache), reads the pointer and parses the metadata
	// (CheckSchema); median.
	ColdMetadataMillis float64 `json:"coldMetadataMillis"`
	// The publish transaction, table commit included, over the last
	// publications before the mark (up to 100).
	PublishP50Millis float64 `json:"publishP50Millis"`
	PublishP95Millis float64 `json:"publishP95Millis"`
	PublishMaxMillis float64 `json:"publishMaxMillis"`
	// MaintainMillis is the mark's MaintainIfDue: a pass (expiry and the
	// sweep of metadata/) runs on every 50th commit, else it is nothing.
	MaintainMillis float64 `json:"maintainMillis"`
	// HeapMiB is the bench's live heap after a GC: what the Lake keeps
	// of the table (with one Lake for the run, every metadata version it
	// committed: see docs/BENCHMARKS.md).
	HeapMiB float64 `json:"heapMiB"`
}

// growthSchema is the backlog's: five dimensions and three metrics.
var growthSchema = backlogSpec(growthDataSource, growthTopic, 1, false, false).DataSchema.DeclaredSchema()

var growthStart = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

func runTableGrowth(ctx context.Context, s *stack, o options, g growthRetention) (tableGrowthRun, error) {
	l0 := lake.New(nil, nil, g.cfg).Config()
	res := tableGrowthRun{Retention: g.name, MaxSnapshotAge: l0.MaxSnapshotAge.String(), MinSnapshots: l0.MinSnapshots,
		RowsPerPublish: growthRows, RenewLakeEvery: o.growthRenew}
	start := time.Now()
	tdb, err := newTableDB(ctx, s, "bench_tablegrowth_"+g.name, "tablegrowth-"+g.name)
	if err != nil {
		return res, err
	}
	defer tdb.close()
	defer os.RemoveAll(tdb.dir) // 10,000 publications leave 10,000 segments
	pool, store, deep, scratch := tdb.pool, tdb.store, tdb.deep, tdb.scratch
	lk := lake.New(pool, deep, g.cfg)
	// renew starts a new Lake after every -growth-renew publications, as
	// a worker restart would: its cache is empty, the next commit reads
	// the metadata from deep storage.
	renew := func(lk *lake.Lake, i int) *lake.Lake {
		if o.growthRenew > 0 && i%o.growthRenew == 0 {
			return lake.New(pool, deep, g.cfg)
		}
		return lk
	}
	marks := slices.Sorted(slices.Values(o.growthMarks))
	var publish []time.Duration
	for i := 1; i <= marks[len(marks)-1]; i++ {
		pub, err := growthPublication(ctx, lk, deep, scratch, i)
		if err != nil {
			return res, fmt.Errorf("publication %d: %w", i, err)
		}
		t0 := time.Now()
		if _, err := store.Publish(ctx, pub); err != nil {
			return res, fmt.Errorf("publication %d: %w", i, err)
		}
		publish = append(publish, time.Since(t0))
		if i%50 == 0 {
			live := liveHeapMiB()
			if live > o.growthMaxHeapMiB {
				// As of the last GC, which may be older than this run.
				runtime.GC()
				live = liveHeapMiB()
			}
			res.PeakHeapMiB = max(res.PeakHeapMiB, live)
			if live > o.growthMaxHeapMiB {
				res.StoppedAfter = i
				res.Stopped = fmt.Sprintf("live heap %.0f MiB after %d publications, over -growth-max-heap %.0f MiB", live, i, o.growthMaxHeapMiB)
				logf("table growth, %s: stopped: %s", g.name, res.Stopped)
				break
			}
		}
		if !slices.Contains(marks, i) {
			if err := lk.MaintainIfDue(ctx, growthDataSource); err != nil {
				return res, fmt.Errorf("publication %d: maintenance: %w", i, err)
			}
			if i%1000 == 0 {
				logf("table growth, %s: %d publications", g.name, i)
			}
			lk = renew(lk, i)
			continue
		}
		m := tableGrowthMark{Publications: i}
		if m.MetadataDirFilesBeforeMaintenance, m.MetadataDirBytesBeforeMaintenance, err = dirSize(deep.Path(growthDataSource + "/metadata")); err != nil {
			return res, err
		}
		t1 := time.Now()
		if err := lk.MaintainIfDue(ctx, growthDataSource); err != nil {
			return res, fmt.Errorf("publication %d: maintenance: %w", i, err)
		}
		m.MaintainMillis = millis(time.Since(t1))
		last := slices.Sorted(slices.Values(publish[max(0, len(publish)-growthWindow):]))
		m.PublishP50Millis, m.PublishP95Millis, m.PublishMaxMillis = millis(percentile(last, 0.5)), millis(percentile(last, 0.95)), millis(last[len(last)-1])
		if err := measureGrowth(ctx, pool, deep, g.cfg, o.growthLoads, &m); err != nil {
			return res, fmt.Errorf("after %d publications: %w", i, err)
		}
		res.Marks = append(res.Marks, m)
		logf("table growth, %s, %d publications: %d snapshots, metadata %d bytes, %d files / %d bytes under metadata/, %d manifests, load + plan %.1f ms, live heap %.0f MiB",
			g.name, i, m.Snapshots, m.MetadataBytes, m.MetadataDirFiles, m.MetadataDirBytes, m.Manifests, m.TotalMillis, m.HeapMiB)
		lk = renew(lk, i)
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// growthPublication writes publication i's segment (growthRows rows at
// minute i-1 of event time) as the publish activity does and returns its
// publication, the table commit included.
func growthPublication(ctx context.Context, lk *lake.Lake, deep *storage.Local, scratch string, i int) (pgstore.Publication, error) {
	ids, err := lk.Ensure(ctx, growthDataSource, growthSchema, domain.GranularityHour)
	if err != nil {
		return pgstore.Publication{}, err
	}
	name := domain.SequenceName(growthSupervisor, 0, i)
	at := growthStart.Add(time.Duration(i-1) * time.Minute)
	hour := at.Truncate(time.Hour)
	path := filepath.Join(scratch, "segment.parquet")
	f, err := os.Create(path)
	if err != nil {
		return pgstore.Publication{}, err
	}
	defer f.Close()
	w, err := segment.NewWriterWithFieldIDs(f, growthSchema, ids)
	if err != nil {
		return pgstore.Publication{}, err
	}
	for r := range growthRows {
		k := i*growthRows + r
		row := domain.Row{
			Time: at.Add(time.Duration(r) * time.Second).UnixMilli(),
			Dims: []domain.Value{
				domain.StringValue("page-" + strconv.Itoa(k%benchPages)),
				domain.StringValue(benchBrowsers[k%len(benchBrowsers)]),
				domain.StringValue(benchCountries[k%len(benchCountries)]),
				domain.StringValue(benchDevices[k%len(benchDevices)]),
				domain.StringValue(benchActions[k%len(benchActions)]),
			},
			Metrics: []domain.Value{domain.LongValue(1), domain.LongValue(int64(k % 97)), domain.LongValue(int64(k % 1013))},
		}
		if err := w.Write(row); err != nil {
			return pgstore.Publication{}, err
		}
	}
	info, err := w.Close()
	if err != nil {
		return pgstore.Publication{}, err
	}
	footer, err := lake.ReadFooter(path)
	if err != nil {
		return pgstore.Publication{}, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return pgstore.Publication{}, err
	}
	interval := hour.Format("20060102T150405Z") + "_" + hour.Add(time.Hour).Format("20060102T150405Z")
	key := growthDataSource + "/" + interval + "/" + name + ".parquet"
	if err := deep.Put(ctx, key, func(w io.Writer) error { _, err := io.Copy(w, f); return err }); err != nil {
		return pgstore.Publication{}, err
	}
	startOffsets, endOffsets := domain.Offsets{}, domain.Offsets{}
	for p := range int32(growthPartitions) {
		startOffsets[domain.P(p)] = int64(i-1) * growthRows
		endOffsets[domain.P(p)] = int64(i) * growthRows
	}
	uri := deep.URI(key)
	files := []lake.File{{URI: uri, Footer: footer}}
	return pgstore.Publication{
		SequenceName: name, SupervisorID: growthSupervisor, DataSource: growthDataSource, Topic: growthTopic,
		Group: 0, SequenceID: i, Start: startOffsets, End: endOffsets, Rows: info.Rows,
		Segments: []pgstore.Segment{{
			ID: growthDataSource + "_" + interval + "_" + name, DataSource: growthDataSource,
			IntervalStart: hour, IntervalEnd: hour.Add(time.Hour), Version: name, SequenceName: name,
			Rows: info.Rows, Bytes: info.Bytes, URI: uri, Checksum: info.Checksum,
		}},
		// As activities.tableCommit.
		Table: func(ctx context.Context, tx pgx.Tx, after domain.Offsets) error {
			_, err := lk.CommitInTx(ctx, tx, lake.Append{DataSource: growthDataSource, Files: files, Summary: map[string]string{
				lake.SummarySupervisor:   growthSupervisor,
				lake.SummarySequence:     name,
				lake.SummaryTaskGroup:    "0",
				lake.SummaryTopic:        growthTopic,
				lake.SummaryStartOffsets: offsetsJSON(startOffsets),
				lake.SummaryEndOffsets:   offsetsJSON(endOffsets),
				lake.SummaryOffsets:      offsetsJSON(after),
			}})
			return err
		},
	}, nil
}

func offsetsJSON(o domain.Offsets) string {
	b, _ := json.Marshal(o)
	return string(b)
}

// measureGrowth fills in what the table looks like now.
func measureGrowth(ctx context.Context, pool *pgxpool.Pool, deep *storage.Local, cfg lake.Config, loads int, m *tableGrowthMark) error {
	var err error
	if m.MetadataDirFiles, m.MetadataDirBytes, err = dirSize(deep.Path(growthDataSource + "/metadata")); err != nil {
		return err
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m.HeapMiB = float64(ms.HeapAlloc) / (1 << 20)

	var load, plan, total, cold []time.Duration
	var t *table.Table
	for range loads {
		t0 := time.Now()
		if t, err = laketest.Load(ctx, pool, cfg, growthDataSource); err != nil {
			return fmt.Errorf("load table: %w", err)
		}
		t1 := time.Now()
		tasks, err := t.Scan().PlanFiles(ctx)
		if err != nil {
			return fmt.Errorf("plan scan: %w", err)
		}
		t2 := time.Now()
		load, plan, total = append(load, t1.Sub(t0)), append(plan, t2.Sub(t1)), append(total, t2.Sub(t0))
		m.DataFiles = len(tasks)

		fresh := lake.New(pool, deep, cfg)
		t3 := time.Now()
		if err := fresh.CheckSchema(ctx, growthDataSource, growthSchema); err != nil {
			return fmt.Errorf("cold metadata read: %w", err)
		}
		cold = append(cold, time.Since(t3))
	}
	med := func(d []time.Duration) float64 {
		return millis(percentile(slices.Sorted(slices.Values(d)), 0.5))
	}
	m.LoadMillis, m.PlanMillis, m.TotalMillis, m.ColdMetadataMillis = med(load), med(plan), med(total), med(cold)
	if m.RESTLoadMillis, err = restLoadMillis(ctx, pool, deep, cfg, loads); err != nil {
		return fmt.Errorf("load through the REST catalog: %w", err)
	}

	meta := t.Metadata()
	m.Snapshots = len(meta.Snapshots())
	for range meta.SnapshotLogs() {
		m.SnapshotLogEntries++
	}
	for range meta.PreviousFiles() {
		m.MetadataLogEntries++
	}
	if m.MetadataBytes, err = fileSize(t.MetadataLocation()); err != nil {
		return err
	}
	snap := t.CurrentSnapshot()
	if snap == nil {
		return fmt.Errorf("table %s has no current snapshot", growthDataSource)
	}
	if m.ManifestListBytes, err = fileSize(snap.ManifestList); err != nil {
		return err
	}
	fsys, err := t.FS(ctx)
	if err != nil {
		return err
	}
	manifests, err := snap.Manifests(fsys)
	if err != nil {
		return fmt.Errorf("read manifest list: %w", err)
	}
	m.Manifests = len(manifests)
	for _, mf := range manifests {
		m.ManifestBytes += mf.Length()
	}
	return nil
}

// liveHeapMiB is the heap the last GC found live.
func liveHeapMiB() float64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return float64(s[0].Value.Uint64()) / (1 << 20)
}

func fileSize(uri string) (int64, error) {
	st, err := os.Stat(strings.TrimPrefix(uri, "file://"))
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// dirSize counts the files under dir and their bytes.
func dirSize(dir string) (files int, bytes int64, err error) {
	err = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files++
		bytes += info.Size()
		return nil
	})
	return files, bytes, err
}

// parseMarks reads -growth-publishes.
func parseMarks(s string) ([]int, error) {
	var out []int
	for v := range strings.SplitSeq(s, ",") {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-growth-publishes: %q is not a positive count", v)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-growth-publishes %q: want at least one count", s)
	}
	return out, nil
}

func printTableGrowth(w io.Writer, runs []tableGrowthRun) {
	fmt.Fprintln(w, "\nIceberg table metadata after N publications (one segment each; laketest.Load + PlanFiles, medians of fresh loads):")
	fmt.Fprintln(w, "\n| retention | publications | snapshots | metadata JSON | metadata/ files (before maintenance) | metadata/ bytes (before maintenance) | manifests (bytes) | manifest list | load + plan | of it, load | REST loadTable | cold metadata parse | publish p50 / p95 / max | maintenance pass | bench heap |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range runs {
		lakes := "one Lake"
		if r.RenewLakeEvery > 0 {
			lakes = fmt.Sprintf("a new Lake every %d", r.RenewLakeEvery)
		}
		for _, m := range r.Marks {
			fmt.Fprintf(w, "| %s (%s, min %d; %s) | %d | %d | %s | %d (%d) | %s (%s) | %d (%s) | %s | %.1f ms | %.1f ms | %.1f ms | %.1f ms | %.1f / %.1f / %.1f ms | %.1f ms | %.0f MiB |\n",
				r.Retention, r.MaxSnapshotAge, r.MinSnapshots, lakes, m.Publications, m.Snapshots, sizeText(m.MetadataBytes),
				m.MetadataDirFiles, m.MetadataDirFilesBeforeMaintenance, sizeText(m.MetadataDirBytes), sizeText(m.MetadataDirBytesBeforeMaintenance),
				m.Manifests, sizeText(m.ManifestBytes), sizeText(m.ManifestListBytes), m.TotalMillis, m.LoadMillis, m.RESTLoadMillis, m.ColdMetadataMillis,
				m.PublishP50Millis, m.PublishP95Millis, m.PublishMaxMillis, m.MaintainMillis, m.HeapMiB)
		}
	}
	for _, r := range runs {
		if r.Stopped != "" {
			fmt.Fprintf(w, "\n%s retention: stopped: %s\n", r.Retention, r.Stopped)
		}
	}
}

func sizeText(b int64) string {
	switch {
	case b >= 10<<20:
		return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	case b >= 10<<10:
		return fmt.Sprintf("%.0f KiB", float64(b)/(1<<10))
	default:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
}
