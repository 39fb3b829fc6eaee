package domain_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

// resetOffsetAutomatically defaults to false, as in Druid, reads true, and
// a value that is not a bool names the field.
func TestSpecResetOffsetAutomatically(t *testing.T) {
	t.Parallel()
	base := `{"id": "x", "dataSchema": {"dataSource": "x", "timestampSpec": {"column": "ts"}, "dimensionsSpec": {"dimensions": ["a"]}},
	  "ioConfig": {"topic": "t"%s}}`
	s, err := domain.ParseSpec([]byte(strings.Replace(base, "%s", "", 1)))
	require.NoError(t, err)
	require.False(t, s.IOConfig.ResetOffsetAutomatically, "default")

	s, err = domain.ParseSpec([]byte(strings.Replace(base, "%s", `, "resetOffsetAutomatically": true`, 1)))
	require.NoError(t, err)
	require.True(t, s.IOConfig.ResetOffsetAutomatically)

	_, err = domain.ParseSpec([]byte(strings.Replace(base, "%s", `, "resetOffsetAutomatically": "yes"`, 1)))
	var fe *domain.FieldError
	require.True(t, errors.As(err, &fe), "%v", err)
	require.Equal(t, "ioConfig.resetOffsetAutomatically", fe.Path)
}

// The message names supervisor, topic, partition, the offset and the
// bounds, tells expiry from a recreated topic, and says what to run.
func TestOutOfRangeMessage(t *testing.T) {
	t.Parallel()
	expired := domain.OutOfRange{SupervisorID: "wiki", Topic: "edits", Partition: 3, Offset: 1200, Earliest: 1500, Latest: 9000}
	require.False(t, expired.Recreated())
	msg := expired.Error()
	for _, want := range []string{"supervisor wiki", "offset 1200", `topic "edits" partition 3`, "offsets 1500 to 9000", "expired",
		"resetOffsetAutomatically is off", "starter reset wiki --partition 3=earliest --force", "resetOffsetAutomatically to true"} {
		require.Contains(t, msg, want)
	}

	recreated := domain.OutOfRange{SupervisorID: "wiki", Topic: "edits", Partition: 0, Offset: 500, Earliest: 0, Latest: 20, AutoReset: true}
	require.True(t, recreated.Recreated())
	require.Equal(t, "latest", recreated.Target())
	msg = recreated.Error()
	require.Contains(t, msg, "deleted and recreated")
	require.Contains(t, msg, "resets the partition to its latest offset")
	require.NotContains(t, msg, "starter reset")
	grown := domain.OutOfRange{Offset: 500, Earliest: 0, Latest: 900}
	require.True(t, grown.Recreated(), "refused, yet not before the earliest: it was past the end of a recreated topic")
	recreated.UseEarliest = true
	require.Equal(t, "earliest", recreated.Target())
}
