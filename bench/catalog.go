package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"handoff/internal/lake"
	"handoff/internal/lake/laketest"
)

// The catalog phase: the Iceberg REST catalog server (`starter catalog
// serve`, a process of its own) answering loadTable of a table with
// -catalog-snapshots snapshots, one load at a time and in a burst of
// -catalog-burst concurrent loads, against a static file server of the
// same metadata file as the yardstick. Order: one load with the server's
// cache cold, the bursts, then the loads one at a time. The table is made by
// -catalog-publishes real publications (the table-growth phase's, through
// the publish transaction), its history then extended to the snapshot
// count (extendHistory).

// catalogToken is the phase's bearer token.
const catalogToken = "bench-catalog-token-0123456789"

// catalogResult is the phase's figures.
type catalogResult struct {
	Publications  int   `json:"publications"` // real ones
	Snapshots     int   `json:"snapshots"`
	MetadataBytes int64 `json:"metadataBytes"`
	Loads         int   `json:"loads"`
	// One load at a time, over HTTP on loopback: the whole answer read.
	LoadP50Millis   float64 `json:"loadP50Millis"`
	LoadP95Millis   float64 `json:"loadP95Millis"`
	StaticP50Millis float64 `json:"staticP50Millis"`
	StaticP95Millis float64 `json:"staticP95Millis"`
	// ClientLoadP50Millis is iceberg-go's REST client's LoadTable, the
	// metadata parsed; ScanRows what it then scans of the current
	// snapshot (every row published).
	ClientLoadP50Millis float64 `json:"clientLoadP50Millis"`
	ScanRows            int64   `json:"scanRows"`
	// ColdLoadMillis is the server's first load: the pointer, then the
	// file read from deep storage and checked to be one JSON object.
	ColdLoadMillis float64 `json:"coldLoadMillis"`
	// Bursts of concurrent loads, after the cold one.
	Bursts []burstResult `json:"bursts"`
	// Server memory: resident before the bursts, and the most it reached.
	ServerRSSBeforeMiB float64 `json:"serverRSSBeforeMiB"`
	ServerPeakRSSMiB   float64 `json:"serverPeakRSSMiB"`
}

func runCatalog(ctx context.Context, s *stack, o options) (catalogResult, error) {
	res := catalogResult{Publications: o.catalogPublishes, Loads: o.catalogLoads}
	tdb, err := newTableDB(ctx, s, "bench_catalog", "catalog")
	if err != nil {
		return res, err
	}
	defer tdb.close()
	pool, store, deep, scratch, dir := tdb.pool, tdb.store, tdb.deep, tdb.scratch, tdb.dir
	lk := lake.New(pool, deep, lake.Config{MinSnapshots: o.catalogSnapshots})
	for i := 1; i <= o.catalogPublishes; i++ {
		pub, err := growthPublication(ctx, lk, deep, scratch, i)
		if err != nil {
			return res, fmt.Errorf("publication %d: %w", i, err)
		}
		if _, err := store.Publish(ctx, pub); err != nil {
			return res, fmt.Errorf("publication %d: %w", i, err)
		}
	}
	loc, size, err := extendHistory(ctx, pool, deep, growthDataSource, o.catalogSnapshots)
	if err != nil {
		return res, err
	}
	res.Snapshots, res.MetadataBytes = o.catalogSnapshots, int64(size)
	logf("catalog: %d publications, history extended to %d snapshots: metadata %s, %d bytes", o.catalogPublishes, res.Snapshots, loc, size)

	srv, base, err := startCatalogServer(ctx, o, tdb.url, deep.Path(""), filepath.Join(dir, "catalog.log"))
	if err != nil {
		return res, err
	}
	defer func() { _ = srv.stop() }()
	metadata, err := readURI(ctx, deep, loc)
	if err != nil {
		return res, err
	}
	static, closeStatic, err := serveStatic(metadata)
	if err != nil {
		return res, err
	}
	defer closeStatic()
	loadURL := base + "/v1/handoff/namespaces/handoff/tables/" + growthDataSource

	rss := func() float64 { b, _ := residentRSS(srv.pid()); return float64(b) / (1 << 20) }
	res.ServerRSSBeforeMiB = rss()
	cold, err := timedGet(ctx, http.DefaultClient, loadURL, catalogToken)
	if err != nil {
		return res, err
	}
	res.ColdLoadMillis = millis(cold)
	for i := range o.catalogBursts {
		b, err := burst(ctx, loadURL, catalogToken, o.catalogBurst)
		if err != nil {
			return res, fmt.Errorf("burst %d: %w", i+1, err)
		}
		sb, err := burst(ctx, static, "", o.catalogBurst)
		if err != nil {
			return res, fmt.Errorf("static burst %d: %w", i+1, err)
		}
		b.StaticSeconds, b.StaticP50Millis, b.StaticErrors = sb.Seconds, sb.P50Millis, sb.Errors
		b.Ratio = b.Seconds / sb.Seconds
		res.Bursts = append(res.Bursts, b)
		logf("catalog: burst %d of %d loads: %.2f s (p50 %.0f ms, p95 %.0f ms), %d errors; static %.2f s: %.2f ×",
			i+1, b.Loads, b.Seconds, b.P50Millis, b.P95Millis, b.Errors, sb.Seconds, b.Ratio)
	}
	peak, err := peakRSS(srv.pid())
	if err != nil {
		return res, err
	}
	res.ServerPeakRSSMiB = float64(peak) / (1 << 20)

	var loads, statics []time.Duration
	for range o.catalogLoads {
		d, err := timedGet(ctx, http.DefaultClient, loadURL, catalogToken)
		if err != nil {
			return res, err
		}
		sd, err := timedGet(ctx, http.DefaultClient, static, "")
		if err != nil {
			return res, err
		}
		loads, statics = append(loads, d), append(statics, sd)
	}
	slices.Sort(loads)
	slices.Sort(statics)
	res.LoadP50Millis, res.LoadP95Millis = millis(percentile(loads, 0.5)), millis(percentile(loads, 0.95))
	res.StaticP50Millis, res.StaticP95Millis = millis(percentile(statics, 0.5)), millis(percentile(statics, 0.95))

	var client []time.Duration
	cat, err := laketest.RESTCatalog(ctx, base, catalogToken)
	if err != nil {
		return res, err
	}
	defer cat.Close()
	for i := range max(o.catalogLoads/5, 3) {
		t0 := time.Now()
		t, err := cat.LoadTable(ctx, []string{lake.DefaultNamespace, growthDataSource})
		if err != nil {
			return res, fmt.Errorf("iceberg-go REST load: %w", err)
		}
		client = append(client, time.Since(t0))
		if i == 0 {
			if n := len(t.Metadata().Snapshots()); n != res.Snapshots {
				return res, fmt.Errorf("iceberg-go loaded %d snapshots through the catalog, want %d", n, res.Snapshots)
			}
			scan, err := laketest.ReadTable(ctx, t, "page")
			if err != nil {
				return res, fmt.Errorf("scan through the catalog: %w", err)
			}
			res.ScanRows = scan.Rows
		}
	}
	slices.Sort(client)
	res.ClientLoadP50Millis = millis(percentile(client, 0.5))
	return res, nil
}

// startCatalogServer runs `starter catalog serve` on the phase's database
// and deep storage, and waits until it answers.
func startCatalogServer(ctx context.Context, o options, dbURL, deepDir, logPath string) (*workerProc, string, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, "", err
	}
	log, err := os.Create(logPath)
	if err != nil {
		return nil, "", err
	}
	cmd := exec.Command(o.starterBin, "catalog", "serve", "--listen", addr, "--log-format", "json")
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dbURL, "HANDOFF_DEEP_STORAGE="+deepDir, "HANDOFF_CATALOG_TOKEN="+catalogToken)
	cmd.Stdout, cmd.Stderr = io.Discard, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, "", fmt.Errorf("start %s: %w (run `make build`)", o.starterBin, err)
	}
	p := &workerProc{cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); log.Close(); close(p.done) }()
	base := "http://" + addr
	if err := p.waitReady(ctx, base+"/readyz"); err != nil {
		_ = p.stop()
		return nil, "", err
	}
	return p, base, nil
}
