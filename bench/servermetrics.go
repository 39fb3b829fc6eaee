package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// heartbeatOperations are the frontend requests that carry an activity
// heartbeat to the server. The SDK throttles a worker's RecordHeartbeat
// calls, so these count what reaches the server, not what a worker calls.
var heartbeatOperations = []string{"RecordActivityTaskHeartbeat", "RecordActivityTaskHeartbeatById"}

// serverHeartbeats reads the Temporal server's Prometheus endpoint and
// returns the heartbeat requests its frontend has served for namespace.
func serverHeartbeats(ctx context.Context, metricsURL, namespace string) (int64, error) {
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, metricsURL, nil)
	if err != nil {
		return 0, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("temporal metrics: %w", err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, fmt.Errorf("temporal metrics: %w", err)
	}
	if res.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("temporal metrics %s: %s", metricsURL, res.Status)
	}
	text := string(body)
	if !strings.Contains(text, "service_requests{") {
		return 0, fmt.Errorf("temporal metrics %s: no service_requests counter", metricsURL)
	}
	var n float64
	for _, op := range heartbeatOperations {
		n += counterSum(text, "service_requests", map[string]string{
			"operation": op, "service_name": "frontend", "namespace": namespace,
		})
	}
	return int64(n), nil
}

// counterSum sums the samples of metric name, in the Prometheus text
// format, whose labels include every pair of want. A series not (yet)
// exposed counts 0.
func counterSum(text, name string, want map[string]string) float64 {
	var sum float64
	for line := range strings.Lines(text) {
		n, labels, v, ok := parseSample(strings.TrimSpace(line))
		if !ok || n != name {
			continue
		}
		match := true
		for k, w := range want {
			if labels[k] != w {
				match = false
				break
			}
		}
		if match {
			sum += v
		}
	}
	return sum
}

// parseSample splits one sample line, `name{k="v",...} value [timestamp]`;
// comments and malformed lines are not samples.
func parseSample(line string) (name string, labels map[string]string, value float64, ok bool) {
	if line == "" || line[0] == '#' {
		return "", nil, 0, false
	}
	rest := line
	if i := strings.IndexAny(line, "{ "); i < 0 {
		return "", nil, 0, false
	} else {
		name, rest = line[:i], line[i:]
	}
	labels = map[string]string{}
	if rest[0] == '{' {
		rest = rest[1:]
		for {
			rest = strings.TrimLeft(rest, ", ")
			if strings.HasPrefix(rest, "}") {
				rest = rest[1:]
				break
			}
			eq := strings.Index(rest, `="`)
			if eq < 0 {
				return "", nil, 0, false
			}
			key := rest[:eq]
			val, n, good := unquoteLabel(rest[eq+1:])
			if !good {
				return "", nil, 0, false
			}
			labels[key], rest = val, rest[eq+1+n:]
		}
	}
	f := strings.Fields(rest)
	if len(f) < 1 {
		return "", nil, 0, false
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return "", nil, 0, false
	}
	return name, labels, v, true
}

// unquoteLabel reads a quoted label value at the start of s (with the
// format's escapes \\, \" and \n) and returns it and the bytes it took.
func unquoteLabel(s string) (string, int, bool) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return b.String(), i + 1, true
		case '\\':
			if i+1 == len(s) {
				return "", 0, false
			}
			i++
			if s[i] == 'n' {
				b.WriteByte('\n')
			} else {
				b.WriteByte(s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, false
}
