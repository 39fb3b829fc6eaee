package main

import (
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/google/pprof/profile"
)

// stageCost is one stage's share of the worker's CPU while it drained the
// backlog, from its CPU profile.
type stageCost struct {
	Stage string `json:"stage"`
	// MicrosPerEvent is CPU time in µs per event of the backlog.
	MicrosPerEvent float64 `json:"cpuMicrosPerEvent"`
	Share          float64 `json:"share"`
}

// stage names what a sample's stack is doing: the first rule, from the
// leaf, that a frame matches (so the runtime's allocation and copying
// count for the stage that asked for them); garbage collection wherever
// it is in the stack.
type stageRule struct {
	stage string
	match func(fn, file string) bool
}

func prefix(ps ...string) func(fn, file string) bool {
	return func(fn, _ string) bool {
		for _, p := range ps {
			if strings.HasPrefix(fn, p) {
				return true
			}
		}
		return false
	}
}

// segmentFile matches functions of internal/segment defined in one of files.
func segmentFile(files ...string) func(fn, file string) bool {
	return func(fn, file string) bool {
		if !strings.HasPrefix(fn, "handoff/internal/segment.") {
			return false
		}
		for _, f := range files {
			if path.Base(file) == f {
				return true
			}
		}
		return false
	}
}

// The stages, in issue 17's words.
const (
	stageFetch    = "fetch and decode (kafka-go, network)"
	stageParse    = "parse (JSON to row)"
	stageRollup   = "rollup"
	stageStaging  = "staging encode"
	stageMerge    = "merge (staging decode, sort)"
	stageParquet  = "Parquet encode"
	stageCompress = "compression (zstd)"
	stageStorage  = "storage write"
	stagePostgres = "Postgres"
	stageTemporal = "Temporal overhead (SDK, gRPC)"
	stageGC       = "garbage collection"
	stageOther    = "other"
)

var stageRules = []stageRule{
	{stageCompress, prefix("github.com/klauspost/compress", "compress/")},
	{stageParse, prefix("handoff/internal/parse.", "handoff/activities.(*chunk).add", "github.com/parquet-go/jsonlite")},
	{stageRollup, prefix("handoff/internal/rollup.", "handoff/internal/aggregate.")},
	{stageStaging, segmentFile("run.go", "runcols.go", "codec.go")},
	{stageMerge, segmentFile("merge.go", "mergeheap.go", "runread.go", "cellring.go", "resort.go", "read.go", "union.go")},
	{stageParquet, prefix("github.com/parquet-go/", "github.com/klauspost/crc32")},
	{stageParquet, segmentFile("write.go", "schema.go", "file.go")},
	{stageStorage, prefix("handoff/internal/storage.", "os.(*File).Write", "os.(*File).Sync", "os.(*File).ReadFrom", "os.Rename")},
	{stagePostgres, prefix("github.com/jackc/", "handoff/internal/pgstore.")},
	{stageTemporal, prefix("go.temporal.io/", "google.golang.org/grpc", "google.golang.org/protobuf")},
	{stageFetch, prefix("github.com/segmentio/kafka-go", "handoff/internal/kafka.", "hash/crc32.", "net.", "internal/poll.", "bufio.")},
}

func isGC(fn string) bool {
	return strings.HasPrefix(fn, "runtime.gcBgMarkWorker") || strings.HasPrefix(fn, "runtime.gcAssistAlloc") ||
		strings.HasPrefix(fn, "runtime.bgsweep") || strings.HasPrefix(fn, "runtime.bgscavenge")
}

// classify names the stage of one stack, leaf first.
func classify(frames [][2]string) string {
	for _, f := range frames {
		if isGC(f[0]) {
			return stageGC
		}
	}
	for _, f := range frames {
		for _, r := range stageRules {
			if r.match(f[0], f[1]) {
				return r.stage
			}
		}
	}
	return stageOther
}

// breakdown reads a CPU profile and returns each stage's CPU per event,
// in the order of stageOrder.
func breakdown(profilePath string, events int64) ([]stageCost, error) {
	f, err := os.Open(profilePath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("profile %s: %w", profilePath, err)
	}
	idx := -1
	for i, st := range p.SampleType {
		if st.Type == "cpu" {
			idx = i
		}
	}
	if idx < 0 {
		return nil, fmt.Errorf("profile %s: no cpu samples", profilePath)
	}
	ns := map[string]int64{}
	var total int64
	for _, s := range p.Sample {
		var frames [][2]string
		for _, loc := range s.Location {
			for _, l := range loc.Line { // inlined frames first, as the stack runs
				if l.Function != nil {
					frames = append(frames, [2]string{l.Function.Name, l.Function.Filename})
				}
			}
		}
		v := s.Value[idx]
		ns[classify(frames)] += v
		total += v
	}
	var out []stageCost
	for _, st := range stageOrder {
		if total == 0 {
			break
		}
		out = append(out, stageCost{Stage: st, MicrosPerEvent: float64(ns[st]) / 1e3 / float64(events), Share: float64(ns[st]) / float64(total)})
	}
	return out, nil
}

// stageOrder is the order the breakdown prints in: the path of an event.
var stageOrder = []string{stageFetch, stageParse, stageRollup, stageStaging, stageMerge, stageParquet, stageCompress,
	stageStorage, stagePostgres, stageTemporal, stageGC, stageOther}
