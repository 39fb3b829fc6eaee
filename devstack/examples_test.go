package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"handoff/internal/domain"
	"handoff/internal/eventgen"
)

// TestExamplesParse keeps every example spec valid as the spec evolves.
func TestExamplesParse(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob("../examples/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no examples/*.json")
	}
	for _, p := range paths {
		if strings.HasSuffix(p, "-compaction.json") {
			continue // a compaction config: starter/cli's TestExampleCompactionConfigIsValid
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := domain.ParseSpec(data); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// TestWikiExampleMatchesGenerator checks the example against what devstack
// produces: its topic and the generator's fields.
func TestWikiExampleMatchesGenerator(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", defaultSpecPath))
	if err != nil {
		t.Fatal(err)
	}
	s, err := domain.ParseSpec(data)
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != "wiki" || s.IOConfig.Topic != "wiki" || s.DataSchema.TimestampSpec.Column != "ts" {
		t.Errorf("spec = id %q, topic %q, ts column %q; want wiki, wiki, ts", s.ID, s.IOConfig.Topic, s.DataSchema.TimestampSpec.Column)
	}
	if s.IOConfig.TaskCount != 2 || !s.IOConfig.UseEarliestOffset || s.TuningConfig.IntermediateHandoffPeriod.D() <= 0 {
		t.Errorf("spec ioConfig/tuningConfig = %+v / %+v", s.IOConfig, s.TuningConfig)
	}
}

func TestWikiDimensionsAreGeneratorFields(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", defaultSpecPath))
	if err != nil {
		t.Fatal(err)
	}
	s, err := domain.ParseSpec(data)
	if err != nil {
		t.Fatal(err)
	}
	var event map[string]any
	if err := json.Unmarshal(eventgen.New("x", 1).Event(0), &event); err != nil {
		t.Fatal(err)
	}
	fields := []string{s.DataSchema.TimestampSpec.Column}
	for _, d := range s.DataSchema.DimensionsSpec.Dimensions {
		fields = append(fields, d.Name)
	}
	for _, f := range fields {
		if _, ok := event[f]; !ok {
			t.Errorf("spec field %q is not in generated events %v", f, event)
		}
	}
}
