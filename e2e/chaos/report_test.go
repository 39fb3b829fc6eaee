package chaos

import (
	"encoding/json"
	"os"
	"slices"
	"sync"
	"testing"
	"time"
)

// ReportEnv names a file to which each scenario appends its result as one
// JSON line.
const ReportEnv = "HANDOFF_CHAOS_REPORT"

// resultPrefix starts the machine-readable line of each scenario's result.
const resultPrefix = "CHAOS-RESULT "

// report is what one scenario did and found.
type report struct {
	t     *testing.T
	start time.Time

	mu        sync.Mutex
	faults    map[string]int
	takeovers []float64 // seconds from each kill to its attempts taken over
}

// result is the JSON of a scenario's report.
type result struct {
	Scenario   string         `json:"scenario"`
	Form       string         `json:"form"`
	Faults     int            `json:"faults"`
	FaultKinds map[string]int `json:"faultKinds"`
	Produced   int64          `json:"produced"`
	Published  int64          `json:"published"`  // rows in the published segments
	Duplicated int64          `json:"duplicated"` // extra copies of ids published more than once
	Lost       int64          `json:"lost"`       // produced ids not published
	Unexpected int64          `json:"unexpected"` // published ids never produced
	// TableRows, TableLost, TableDuplicated: the same count read through
	// the datasource's Iceberg table (iceberg-go's SQL catalog).
	TableRows       int64 `json:"tableRows"`
	TableLost       int64 `json:"tableLost"`
	TableDuplicated int64 `json:"tableDuplicated"`
	// StagingTempLeft counts temporary files of writes a kill
	// interrupted left in staging; any file left there fails the scenario.
	StagingTempLeft int     `json:"stagingTempLeft"`
	Segments        int     `json:"segments"`
	Sequences       int     `json:"sequences"`
	Seconds         float64 `json:"seconds"`
	// TakeoverSeconds: from each worker kill until the server saw none of
	// its attempts started any more (a live worker's lease takeover).
	TakeoverSeconds []float64 `json:"takeoverSeconds,omitempty"`
	Passed          bool      `json:"passed"`
}

func newReport(t *testing.T) *report {
	return &report{t: t, start: time.Now(), faults: map[string]int{}}
}

// fault records one injected fault of a kind.
func (r *report) fault(kind string) { r.faultN(kind, 1) }

// faultN records n injected faults of a kind.
// takeover records how long a dead worker's attempts took to move.
func (r *report) takeover(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.takeovers = append(r.takeovers, float64(d.Round(100*time.Millisecond))/float64(time.Second))
}

func (r *report) faultN(kind string, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.faults[kind] += n
	if n == 1 {
		r.t.Logf("fault %d: %s", r.total(), kind)
	} else {
		r.t.Logf("faults %d: %d × %s", r.total(), n, kind)
	}
}

func (r *report) total() int {
	n := 0
	for _, c := range r.faults {
		n += c
	}
	return n
}

// faultCount returns how many faults were injected.
func (r *report) faultCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total()
}

// emit logs the result as one line and appends it to $HANDOFF_CHAOS_REPORT.
func (r *report) emit(res result) {
	r.mu.Lock()
	res.Scenario, res.Form = r.t.Name(), form()
	res.FaultKinds = map[string]int{}
	for k, v := range r.faults {
		res.FaultKinds[k] = v
	}
	res.Faults = r.total()
	res.TakeoverSeconds = slices.Clone(r.takeovers)
	r.mu.Unlock()
	res.Seconds = time.Since(r.start).Round(100 * time.Millisecond).Seconds()
	b, err := json.Marshal(res)
	if err != nil {
		r.t.Errorf("report: %v", err)
		return
	}
	r.t.Log(resultPrefix + string(b))
	if path := os.Getenv(ReportEnv); path != "" {
		appendLine(r.t, path, b)
	}
}

var reportFileMu sync.Mutex

func appendLine(t *testing.T, path string, b []byte) {
	reportFileMu.Lock()
	defer reportFileMu.Unlock()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Errorf("report file: %v", err)
		return
	}
	defer f.Close()
	if _, err := f.Write(append(b, '\n')); err != nil {
		t.Errorf("report file: %v", err)
	}
}
