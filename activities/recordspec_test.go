package activities_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/protocol"
)

func TestRecordSpecRecordsOnlyChanges(t *testing.T) {
	t.Parallel()
	acts, env := fixture(t)
	spec := domain.Spec{ID: "sup", DataSchema: domain.DataSchema{DataSource: "ds"}, IOConfig: domain.IOConfig{Topic: topic, TaskCount: 1}}

	record := func(s domain.Spec) protocol.RecordSpecResult {
		t.Helper()
		v, err := env.ExecuteActivity(protocol.ActivityRecordSpec, protocol.RecordSpecInput{SupervisorID: "sup", Spec: s})
		require.NoError(t, err)
		var res protocol.RecordSpecResult
		require.NoError(t, v.Get(&res))
		return res
	}
	require.Equal(t, protocol.RecordSpecResult{Recorded: true, Version: 1}, record(spec))
	require.Equal(t, protocol.RecordSpecResult{Recorded: false, Version: 1}, record(spec))
	changed := spec
	changed.IOConfig.TaskCount = 2
	require.Equal(t, protocol.RecordSpecResult{Recorded: true, Version: 2}, record(changed))

	hist, err := acts.Store.SpecHistory(context.Background(), "sup")
	require.NoError(t, err)
	require.Len(t, hist, 2)
	var first, second domain.Spec
	require.NoError(t, json.Unmarshal(hist[0].Spec, &first))
	require.NoError(t, json.Unmarshal(hist[1].Spec, &second))
	require.Equal(t, spec, first)
	require.Equal(t, changed, second)
}
