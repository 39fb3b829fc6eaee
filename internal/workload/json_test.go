package workload

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/jsoncheck"
)

// The status page's JSON: lowerCamel keys, durations as strings, and it
// reads back to the same snapshot.
func TestSnapshotJSON(t *testing.T) {
	t.Parallel()
	var s Snapshot
	jsoncheck.Fill(&s)
	b, err := json.Marshal(s)
	require.NoError(t, err)
	require.NoError(t, jsoncheck.Check(b), string(b))

	var doc struct{ Limits, Memory map[string]any }
	require.NoError(t, json.Unmarshal(b, &doc))
	require.Equal(t, jsoncheck.Sentinel.String(), doc.Limits["checkEvery"])
	require.Equal(t, jsoncheck.Sentinel.String(), doc.Memory["pushBackTotal"])

	var back Snapshot
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, s, back)

	var l Limits
	require.ErrorContains(t, json.Unmarshal([]byte(`{"checkEvery":250000000}`), &l), "checkEvery")
	require.NoError(t, json.Unmarshal([]byte(`{"consume":3,"checkEvery":"250ms"}`), &l))
	require.Equal(t, Limits{Consume: 3, CheckEvery: 250 * time.Millisecond}, l)
}
