package e2e

import (
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/stretchr/testify/require"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"handoff/internal/domain"
	"handoff/workflows"
)

// recordHistoriesEnv names a directory: when set, tests that call
// recordHistories save the histories of every run of their workflows
// there, for the replay tests in workflows/ (see workflows/replay_test.go).
const recordHistoriesEnv = "HANDOFF_RECORD_HISTORIES"

// recordHistories saves, gzipped, the history of every run of the
// supervisor and its groups, named after the test.
func (s *stack) recordHistories(spec domain.Spec) {
	s.t.Helper()
	dir := os.Getenv(recordHistoriesEnv)
	if dir == "" {
		return
	}
	require.NoError(s.t, os.MkdirAll(dir, 0o755))
	ids := []string{workflows.SupervisorWorkflowID(spec.ID)}
	for g := range spec.IOConfig.TaskCount {
		ids = append(ids, workflows.TaskGroupWorkflowID(spec.ID, g))
	}
	for _, id := range ids {
		kind := strings.TrimPrefix(strings.TrimPrefix(id, "supervisor/"+spec.ID), "/")
		if kind == "" {
			kind = "supervisor"
		}
		s.recordRuns(dir, id, kind)
	}
}

// recordCompactionHistories saves, as recordHistories does, every run of
// the datasource's compaction workflow.
func (s *stack) recordCompactionHistories(ds string) {
	s.t.Helper()
	if dir := os.Getenv(recordHistoriesEnv); dir != "" {
		require.NoError(s.t, os.MkdirAll(dir, 0o755))
		s.recordRuns(dir, workflows.CompactionWorkflowID(ds), "compaction")
	}
}

// recordRuns writes the history of every run of workflow id to dir.
func (s *stack) recordRuns(dir, id, kind string) {
	ctx := context.Background()
	runs, err := s.temporal.ListWorkflow(ctx, listRequest(id))
	require.NoError(s.t, err)
	for i, run := range runs.GetExecutions() {
		hist := &historypb.History{}
		it := s.temporal.GetWorkflowHistory(ctx, id, run.GetExecution().GetRunId(), false, 0)
		for it.HasNext() {
			ev, err := it.Next()
			require.NoError(s.t, err)
			hist.Events = append(hist.Events, ev)
		}
		data, err := protojson.Marshal(hist)
		require.NoError(s.t, err)
		writeGzip(s, filepath.Join(dir, fmt.Sprintf("%s_%s_run%d.json.gz", s.name, kind, i)), data)
	}
}

func writeGzip(s *stack, path string, data []byte) {
	f, err := os.Create(path)
	require.NoError(s.t, err)
	defer f.Close()
	zw := gzip.NewWriter(f)
	_, err = zw.Write(data)
	require.NoError(s.t, err)
	require.NoError(s.t, zw.Close())
}

// listRequest lists every run of one workflow id.
func listRequest(id string) *workflowservice.ListWorkflowExecutionsRequest {
	return &workflowservice.ListWorkflowExecutionsRequest{Query: fmt.Sprintf("WorkflowId = %q", id)}
}
