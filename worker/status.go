package main

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strings"
	"time"

	"handoff/internal/domain"
	"handoff/internal/redact"
	"handoff/internal/workload"
)

//go:embed status.html
var statusHTML string

var statusPage = template.Must(template.New("status").Funcs(template.FuncMap{
	"bytes":      formatBytes,
	"duration":   formatDuration,
	"clock":      func(t time.Time) string { return t.Format("15:04:05") },
	"stamp":      func(t time.Time) string { return t.Format("2006-01-02 15:04:05 MST") },
	"partitions": formatPartitions,
	"percent":    func(f float64) string { return fmt.Sprintf("%.4g%%", f*100) },
}).Parse(statusHTML))

// statusHandler serves the tracker's snapshot, after the Beam worker's
// status page: an HTML page (refreshing itself every 5 seconds) of the
// running activities, memory, limits and recent failures, or with
// ?format=json the workload.Snapshot itself. Passwords in it are masked.
func statusHandler(t *workload.Tracker) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := redactSnapshot(t.Snapshot())
		w.Header().Set("Cache-Control", "no-store")
		switch r.URL.Query().Get("format") {
		case "json":
			w.Header().Set("Content-Type", "application/json")
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			_ = enc.Encode(s) // the client went away
		case "", "html":
			var page bytes.Buffer
			if err := statusPage.Execute(&page, newStatusView(s)); err != nil {
				http.Error(w, "status page: "+err.Error(), http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = page.WriteTo(w)
		default:
			http.Error(w, "format: want html or json", http.StatusBadRequest)
		}
	})
}

// redactSnapshot masks passwords an error or a name may quote.
func redactSnapshot(s workload.Snapshot) workload.Snapshot {
	s.Active = slices.Clone(s.Active)
	for i := range s.Active {
		s.Active[i] = redactWork(s.Active[i])
	}
	s.RecentFailures = slices.Clone(s.RecentFailures)
	for i := range s.RecentFailures {
		f := &s.RecentFailures[i]
		f.Work, f.Error = redactWork(f.Work), redact.URL(f.Error)
	}
	return s
}

func redactWork(w workload.Work) workload.Work {
	w.ID, w.Supervisor, w.Sequence, w.State = redact.URL(w.ID), redact.URL(w.Supervisor), redact.URL(w.Sequence), redact.URL(w.State)
	return w
}

// statusView is what the page shows, derived from a snapshot.
type statusView struct {
	workload.Snapshot
	Work     []workView
	Slots    []slotView
	Failures []workload.Failure // latest first
	// PushingBackFor is how long the current push-back has lasted.
	PushingBackFor time.Duration
}

type workView struct {
	workload.Work
	RunningFor, InStateFor time.Duration
	Waiting                bool // for a slot or memory
}

type slotView struct {
	Kind             workload.Kind
	Limit            int
	Running, Waiting int
}

func newStatusView(s workload.Snapshot) statusView {
	v := statusView{Snapshot: s, Failures: slices.Clone(s.RecentFailures)}
	slices.Reverse(v.Failures)
	slots := map[workload.Kind]*slotView{
		workload.Consume: {Kind: workload.Consume, Limit: s.Limits.Consume},
		workload.Publish: {Kind: workload.Publish, Limit: s.Limits.Publish},
	}
	for _, w := range s.Active {
		waiting := w.State == workload.StateWaitingForSlot || w.State == workload.StateWaitingForMemory
		v.Work = append(v.Work, workView{Work: w, RunningFor: s.Time.Sub(w.StartedAt), InStateFor: s.Time.Sub(w.StateSince), Waiting: waiting})
		if sv := slots[w.Kind]; sv != nil {
			if w.State == workload.StateWaitingForSlot {
				sv.Waiting++
			} else {
				sv.Running++
			}
		}
	}
	v.Slots = []slotView{*slots[workload.Consume], *slots[workload.Publish]}
	if s.Memory.PushingBack {
		v.PushingBackFor = s.Time.Sub(s.Memory.PushBackSince)
	}
	return v
}

// formatBytes writes n in IEC units, as GOMEMLIMIT and the config take them.
func formatBytes(n any) string {
	var b float64
	switch n := n.(type) {
	case int64:
		b = float64(n)
	case uint64:
		b = float64(n)
	case int:
		b = float64(n)
	}
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B", b)
	}
	return fmt.Sprintf("%.1f %s", b, units[i])
}

// formatDuration rounds to the millisecond under a second, to a tenth of
// a second under a minute, else to the second.
func formatDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

func formatPartitions(ps []domain.Partition) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}
