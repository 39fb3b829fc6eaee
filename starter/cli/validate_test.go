package cli

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

func TestValidateGoodSpecText(t *testing.T) {
	t.Parallel()
	r := runCLI(t, runOpts{}, "validate", "-f", "testdata/spec.json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, "spec ok: supervisor orders reads topic orders into datasource orders (2 task groups)\n", r.stdout)
	assert.Empty(t, r.stderr)
}

func TestValidateGoodSpecJSONHasDefaults(t *testing.T) {
	t.Parallel()
	r := runCLI(t, runOpts{}, "validate", "-f", "testdata/spec.json", "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)

	var got domain.Spec
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	data, err := os.ReadFile("testdata/spec.json")
	require.NoError(t, err)
	want, err := domain.ParseSpec(data)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Equal(t, domain.DefaultMaxRecordsPerChunk, got.TuningConfig.MaxRecordsPerChunk, "defaults are filled")
	assert.Equal(t, domain.DefaultChunkPeriod, got.TuningConfig.ChunkPeriod)
}

func TestValidateFromStdin(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/spec.json")
	require.NoError(t, err)
	r := runCLI(t, runOpts{stdin: string(data)}, "validate", "-f", "-")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "spec ok: supervisor orders")
}

func TestValidateBadSpecs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, spec string
		want       []string // substrings of stderr
	}{
		{
			name: "malformed JSON names line and column",
			spec: "{\n  \"id\": \"orders\",\n  \"ioConfig\": {\"topic\": }\n}",
			want: []string{"not valid JSON", "line 3, column"},
		},
		{
			name: "missing topic names ioConfig.topic",
			spec: `{"id": "orders", "dataSchema": {"dataSource": "orders", "timestampSpec": {"column": "ts"},
				"dimensionsSpec": {"dimensions": ["a"]}}, "ioConfig": {}}`,
			want: []string{"ioConfig.topic", "required"},
		},
		{
			name: "unknown field",
			spec: `{"id": "orders", "topic": "x"}`,
			want: []string{"unknown field", "topic"},
		},
		{
			name: "wrong type names the field",
			spec: `{"id": "orders", "ioConfig": {"taskCount": "two"}}`,
			want: []string{"ioConfig.taskCount"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeFile(t, tt.spec)
			r := runCLI(t, runOpts{}, "validate", "-f", path)
			assert.Equal(t, ExitFailure, r.code)
			assert.Empty(t, r.stdout, "errors go to stderr only")
			assert.Contains(t, r.stderr, path)
			for _, w := range tt.want {
				assert.Contains(t, r.stderr, w)
			}
		})
	}
}

func TestValidateMissingFile(t *testing.T) {
	t.Parallel()
	r := runCLI(t, runOpts{}, "validate", "-f", "testdata/nope.json")
	assert.Equal(t, ExitFailure, r.code)
	assert.Contains(t, r.stderr, "testdata/nope.json")
}

func TestStartBadSpecStartsNothing(t *testing.T) {
	t.Parallel()
	path := writeFile(t, `{"id": "orders"}`)
	// The default dial fails the test: a bad spec must not even connect.
	r := runCLI(t, runOpts{}, "start", "-f", path)
	assert.Equal(t, ExitFailure, r.code)
	assert.Contains(t, r.stderr, "dataSchema.dataSource")
}
