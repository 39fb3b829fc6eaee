package process

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/eventgen"
)

// TestMetricsCountWhatWasIngested ingests N distinct events (rollup off)
// and compares the worker's counters with what Postgres holds once the
// supervisor stopped. Events processed may exceed N: a retried consume
// reads its chunk again. Rows published are counted once per committed
// sequence, so they equal N exactly.
func TestMetricsCountWhatWasIngested(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 4)
	spec := e.spec(2)
	rollup := false
	spec.DataSchema.GranularitySpec.Rollup = &rollup
	gen := eventgen.New(e.name, 31)
	const half = 5000
	const n = 2 * half

	w := e.startWorker("a")
	require.NoError(t, e.produce(gen, half, 0))
	run := e.startSupervisor(spec)
	producing := e.produceInBackground(gen, half, 5000)
	e.checkpointUntilPublished(spec, 0, 60*time.Second)
	during, err := scrape(w)
	require.NoError(t, err)
	t.Logf("mid-ingestion: %s", during.summary(e.name))
	require.NoError(t, <-producing)
	e.waitCaughtUp(spec, time.Minute)
	e.stopAndWait(spec, run, 2*time.Minute)
	segments := e.requireExactlyOnce(spec, gen.RunID, n)

	m, err := scrape(w)
	require.NoError(t, err)
	t.Logf("after stop: %s", m.summary(e.name))
	processed, ok := m.sum("handoff_events_processed_total", e.name)
	require.True(t, ok, "no handoff_events_processed_total{supervisor=%q} in /metrics; handoff_ metrics there: %v", e.name, m.names("handoff_"))
	rows, ok := m.sum("handoff_rows_published_total", e.name)
	require.True(t, ok, "no handoff_rows_published_total{supervisor=%q} in /metrics; handoff_ metrics there: %v", e.name, m.names("handoff_"))
	segs, ok := m.sum("handoff_segments_published_total", e.name)
	if !ok { // the counter may have no supervisor label
		segs, ok = m.sum("handoff_segments_published_total", "")
	}
	require.True(t, ok, "no handoff_segments_published_total in /metrics; handoff_ metrics there: %v", m.names("handoff_"))

	require.GreaterOrEqual(t, processed, float64(n), "events processed (retries may re-read, never read less)")
	if processed > n {
		t.Logf("events processed %v > %d: chunks were read more than once", processed, n)
	}
	require.Equal(t, float64(n), rows, "rows published")
	require.Equal(t, float64(segments), segs, "segments published vs the segments table")
}

// TestStatusPageShowsActiveWork reads /status while the worker ingests: the
// JSON lists a running consume activity of the supervisor with its state,
// and the HTML page names the supervisor.
func TestStatusPageShowsActiveWork(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 4)
	spec := e.spec(2)
	gen := eventgen.New(e.name, 41)

	w := e.startWorker("a")
	require.NoError(t, e.produce(gen, 4000, 0))
	run := e.startSupervisor(spec)
	producing := e.produceInBackground(gen, 20000, 2000) // about ten seconds of ingestion

	var found map[string]any
	var last string
	deadline := time.Now().Add(30 * time.Second)
	for found == nil && time.Now().Before(deadline) {
		code, body, err := httpGet(w.url("/status?format=json"))
		switch {
		case err != nil:
			last = err.Error()
		case code != http.StatusOK:
			last = fmt.Sprintf("%d %s", code, cut(strings.TrimSpace(body), 300))
		default:
			var doc any
			if err := json.Unmarshal([]byte(body), &doc); err != nil {
				last = fmt.Sprintf("not JSON (%v): %s", err, cut(body, 300))
				break
			}
			last = cut(body, 2000)
			found = findWork(doc, "consume", e.name)
		}
		if found == nil {
			time.Sleep(25 * time.Millisecond)
		}
	}
	require.NotNil(t, found, "GET /status?format=json listed no active consume of supervisor %q in 30s; last answer: %s", e.name, last)
	t.Logf("active consume: %v", found)
	require.NotEmpty(t, found["state"], "the activity has a state")

	var contentType string
	require.NoError(t, retry(10*time.Second, func() (err error) {
		var code int
		var body string
		code, contentType, body, err = httpGetType(w.url("/status"))
		switch {
		case err != nil:
			return err
		case code != http.StatusOK:
			return fmt.Errorf("GET /status: %d %s", code, cut(body, 300))
		case !strings.Contains(body, e.name):
			return fmt.Errorf("GET /status does not name supervisor %s: %s", e.name, cut(body, 2000))
		}
		return nil
	}))
	require.Contains(t, contentType, "text/html", "GET /status is an HTML page")

	require.NoError(t, <-producing)
	e.waitCaughtUp(spec, time.Minute)
	e.stopAndWait(spec, run, 2*time.Minute)
	e.requireExactlyOnce(spec, gen.RunID, 24000)
}

// findWork looks anywhere in a JSON document for an object of the kind
// whose supervisor is supervisor, so the test does not depend on where the
// page nests its list of active work.
func findWork(doc any, kind, supervisor string) map[string]any {
	switch v := doc.(type) {
	case map[string]any:
		if v["kind"] == kind && v["supervisor"] == supervisor {
			return v
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if w := findWork(v[k], kind, supervisor); w != nil {
				return w
			}
		}
	case []any:
		for _, x := range v {
			if w := findWork(x, kind, supervisor); w != nil {
				return w
			}
		}
	}
	return nil
}

// metrics is a scrape of /metrics in the Prometheus text format: each
// sample's metric name, labels and value.
type metrics []sample

type sample struct {
	name   string
	labels map[string]string
	value  float64
}

func scrape(w *workerProc) (metrics, error) {
	code, body, err := httpGet(w.url("/metrics"))
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %d", code)
	}
	return parseMetrics(body)
}

// parseMetrics reads the text exposition format, enough of it for
// counters and gauges: `name{a="x",b="y"} value [timestamp]`.
func parseMetrics(text string) (metrics, error) {
	var out metrics
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s := sample{labels: map[string]string{}}
		rest := line
		if i := strings.IndexAny(rest, "{ "); i < 0 {
			return nil, fmt.Errorf("metrics line %q", line)
		} else {
			s.name, rest = rest[:i], rest[i:]
		}
		if strings.HasPrefix(rest, "{") {
			var err error
			if rest, err = parseLabels(rest[1:], s.labels); err != nil {
				return nil, fmt.Errorf("metrics line %q: %w", line, err)
			}
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return nil, fmt.Errorf("metrics line %q: no value", line)
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return nil, fmt.Errorf("metrics line %q: %w", line, err)
		}
		s.value = v
		out = append(out, s)
	}
	return out, nil
}

// parseLabels reads `a="x",b="y"}` into labels and returns what follows.
func parseLabels(s string, labels map[string]string) (string, error) {
	for {
		s = strings.TrimLeft(s, " ,")
		if strings.HasPrefix(s, "}") {
			return s[1:], nil
		}
		eq := strings.Index(s, "=")
		if eq < 0 || len(s) < eq+2 || s[eq+1] != '"' {
			return "", fmt.Errorf("bad labels at %q", s)
		}
		name := strings.TrimSpace(s[:eq])
		s = s[eq+2:]
		var val strings.Builder
		i := 0
		for ; i < len(s) && s[i] != '"'; i++ {
			if s[i] == '\\' && i+1 < len(s) {
				i++
				switch s[i] {
				case 'n':
					val.WriteByte('\n')
				default:
					val.WriteByte(s[i])
				}
				continue
			}
			val.WriteByte(s[i])
		}
		if i == len(s) {
			return "", fmt.Errorf("unterminated label value of %s", name)
		}
		labels[name] = val.String()
		s = s[i+1:]
	}
}

// sum adds the samples of name whose supervisor label is supervisor (any
// samples of name when supervisor is empty); ok says whether there were
// any.
func (m metrics) sum(name, supervisor string) (total float64, ok bool) {
	for _, s := range m {
		if s.name != name || (supervisor != "" && s.labels["supervisor"] != supervisor) {
			continue
		}
		total, ok = total+s.value, true
	}
	return total, ok
}

// names lists the distinct metric names with prefix.
func (m metrics) names(prefix string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range m {
		if strings.HasPrefix(s.name, prefix) && !seen[s.name] {
			seen[s.name] = true
			out = append(out, s.name)
		}
	}
	sort.Strings(out)
	return out
}

// summary shows the three counters the metrics test checks.
func (m metrics) summary(supervisor string) string {
	var parts []string
	for _, name := range []string{"handoff_events_processed_total", "handoff_rows_published_total", "handoff_segments_published_total"} {
		v, ok := m.sum(name, supervisor)
		if !ok {
			v, ok = m.sum(name, "")
		}
		if ok {
			parts = append(parts, fmt.Sprintf("%s=%v", name, v))
		} else {
			parts = append(parts, name+" absent")
		}
	}
	return strings.Join(parts, ", ") + fmt.Sprintf(" (%d handoff_ metric names)", len(m.names("handoff_")))
}

func TestParseMetrics(t *testing.T) {
	t.Parallel()
	m, err := parseMetrics(`# HELP handoff_rows_published_total Rows.
# TYPE handoff_rows_published_total counter
handoff_rows_published_total{supervisor="a",datasource="x"} 10
handoff_rows_published_total{supervisor="b"} 5
handoff_rows_published_total{datasource="q\"\\,}",supervisor="a"} 2.5
go_goroutines 12
handoff_lag{supervisor="a"} 1e+06 1700000000000
`)
	require.NoError(t, err)
	v, ok := m.sum("handoff_rows_published_total", "a")
	require.True(t, ok)
	require.Equal(t, 12.5, v)
	v, _ = m.sum("handoff_rows_published_total", "")
	require.Equal(t, 17.5, v)
	v, _ = m.sum("handoff_lag", "a")
	require.Equal(t, 1e6, v)
	_, ok = m.sum("handoff_rows_published_total", "c")
	require.False(t, ok)
	require.Equal(t, []string{"handoff_lag", "handoff_rows_published_total"}, m.names("handoff_"))
}
