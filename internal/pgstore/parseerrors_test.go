package pgstore_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/pgstore"
)

func TestParseErrorsKeepTheLatest(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), context.Background()
	mk := func(off int64) pgstore.ParseError {
		return pgstore.ParseError{DataSource: "ds", Topic: "t", Partition: 1, Offset: off, Error: "bad", Message: []byte("x")}
	}
	require.NoError(t, s.SaveParseErrors(ctx, "sup", []pgstore.ParseError{mk(1), mk(2), mk(3)}, 2))
	require.NoError(t, s.SaveParseErrors(ctx, "sup", []pgstore.ParseError{mk(3), mk(4)}, 2), "a retried chunk saves its rows again")
	got, err := s.ParseErrors(ctx, "sup")
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.Equal(t, []int64{4, 3}, []int64{got[0].Offset, got[1].Offset}, "the latest two, latest first")

	big := mk(5)
	big.Message = make([]byte, 1<<20)
	require.NoError(t, s.SaveParseErrors(ctx, "sup", []pgstore.ParseError{big}, 2))
	got, err = s.ParseErrors(ctx, "sup")
	require.NoError(t, err)
	require.True(t, got[0].Truncated)
	require.Len(t, got[0].Message, 64<<10)
}
