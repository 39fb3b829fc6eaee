package activities

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNoticeWithSetsWhatThePublishWrote: the notice keeps every member the
// workflow wrote, byte for byte, and gains (or has replaced) "segments" and
// "rows"; what is not a JSON object is refused.
func TestNoticeWithSetsWhatThePublishWrote(t *testing.T) {
	m, err := noticeWith(json.RawMessage(`{"group":2,"end":{"t/0":9007199254740993},"segments":0,"closed":{"nextSequenceId":8}}`), 3, 1234)
	require.NoError(t, err)
	out, err := json.Marshal(m)
	require.NoError(t, err)
	require.JSONEq(t, `{"group":2,"end":{"t/0":9007199254740993},"segments":3,"rows":1234,"closed":{"nextSequenceId":8}}`, string(out))
	require.Contains(t, string(out), `9007199254740993`, "offsets pass through exactly, not as floats")

	for _, bad := range []string{`null`, `[1]`, `"x"`, ``} {
		_, err := noticeWith(json.RawMessage(bad), 1, 1)
		require.Error(t, err, "notice %q", bad)
	}
}
