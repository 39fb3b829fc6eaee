package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"
)

// burstResult is one burst of concurrent loads: each reads the whole
// answer, which must be a 200 of the full length.
type burstResult struct {
	Loads     int     `json:"loads"`
	Seconds   float64 `json:"seconds"` // first request sent → last answer read
	P50Millis float64 `json:"p50Millis"`
	P95Millis float64 `json:"p95Millis"`
	MaxMillis float64 `json:"maxMillis"`
	Errors    int     `json:"errors"`
	// The same burst against a static file server of the metadata file.
	StaticSeconds   float64 `json:"staticSeconds"`
	StaticP50Millis float64 `json:"staticP50Millis"`
	StaticErrors    int     `json:"staticErrors"`
	Ratio           float64 `json:"ratio"` // Seconds / StaticSeconds
}

// burst sends n GETs of url at once, each on its own connection.
func burst(ctx context.Context, url, token string, n int) (burstResult, error) {
	tr := &http.Transport{MaxIdleConnsPerHost: n, DisableCompression: true,
		DialContext: (&net.Dialer{Timeout: 30 * time.Second}).DialContext}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 5 * time.Minute}
	times := make([]time.Duration, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			times[i], errs[i] = timedGet(ctx, c, url, token)
		}()
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	r := burstResult{Loads: n, Seconds: time.Since(t0).Seconds()}
	var first error
	for _, err := range errs {
		if err != nil {
			r.Errors++
			if first == nil {
				first = err
			}
		}
	}
	if r.Errors == n {
		return r, fmt.Errorf("every load failed: %w", first)
	}
	slices.Sort(times)
	r.P50Millis, r.P95Millis, r.MaxMillis = millis(percentile(times, 0.5)), millis(percentile(times, 0.95)), millis(times[n-1])
	if first != nil {
		logf("catalog: %d of %d loads of %s failed, first: %v", r.Errors, n, url, first)
	}
	return r, nil
}

// timedGet GETs url and reads the whole answer, which must be a 200 of
// its Content-Length.
func timedGet(ctx context.Context, c *http.Client, url, token string) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	t0 := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	d := time.Since(t0)
	switch {
	case err != nil:
		return d, err
	case resp.StatusCode != http.StatusOK:
		return d, fmt.Errorf("GET %s: %s", url, resp.Status)
	case resp.ContentLength >= 0 && n != resp.ContentLength:
		return d, fmt.Errorf("GET %s: %d of %d bytes", url, n, resp.ContentLength)
	}
	return d, nil
}

// serveStatic serves body at /metadata.json on loopback, as a static file
// server does (http.ServeContent), in this process.
func serveStatic(body []byte) (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	mod := time.Now()
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		http.ServeContent(w, r, "metadata.json", mod, bytes.NewReader(body))
	})}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String() + "/metadata.json", func() { _ = srv.Close() }, nil
}

func printCatalog(w io.Writer, r catalogResult) {
	fmt.Fprintf(w, "\nIceberg REST catalog (starter catalog serve): loadTable of a table with %d snapshots (%d real publications), metadata %d bytes\n\n",
		r.Snapshots, r.Publications, r.MetadataBytes)
	fmt.Fprintf(w, "First load, the server's cache cold: %.1f ms\n", r.ColdLoadMillis)
	fmt.Fprintf(w, "One at a time (%d loads, the whole answer read): p50 %.1f ms, p95 %.1f ms; static file server of the same file p50 %.1f ms, p95 %.1f ms; iceberg-go's REST client LoadTable (parsed) p50 %.1f ms; its scan of the current snapshot: %d rows\n\n",
		r.Loads, r.LoadP50Millis, r.LoadP95Millis, r.StaticP50Millis, r.StaticP95Millis, r.ClientLoadP50Millis, r.ScanRows)
	fmt.Fprintln(w, "| burst | loads | seconds | p50 / p95 / max ms | errors | static server seconds | ratio |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|")
	for i, b := range r.Bursts {
		fmt.Fprintf(w, "| %d | %d | %.2f | %.0f / %.0f / %.0f | %d | %.2f | %.2f × |\n",
			i+1, b.Loads, b.Seconds, b.P50Millis, b.P95Millis, b.MaxMillis, b.Errors, b.StaticSeconds, b.Ratio)
	}
	fmt.Fprintf(w, "\nServer resident memory: %.0f MiB before the bursts, peak %.0f MiB (VmHWM)\n", r.ServerRSSBeforeMiB, r.ServerPeakRSSMiB)
}
