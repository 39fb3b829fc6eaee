package parse

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// decodedMillis reads what parseISO reads, and refuses what it refuses.
func TestDecodedMillisIsParseISO(t *testing.T) {
	texts := []string{
		"2024-02-29T12:34:56.789Z", "2024-02-29", "1970-01-01T00:00:00Z", "1969-12-31T23:59:59.999999999Z",
		"0000-01-01T00:00:00Z", "9999-12-31T23:59:59.1Z", "2023-02-29", "2024-02-30T00:00:00Z", "2024-13-01",
		"2024-01-01T24:00:00Z", "2024-01-01T00:60:00Z", "2024-01-01T00:00:60Z", "2024-01-01T00:00:00.Z",
		"2024-01-01T00:00:00.1234567890Z", "2024-01-01T00:00:00+02:00", "2024-01-01T00:00:00", "2024-1-01",
		"", "x", "2024-01-01T00:00:00.12a4Z", "+024-01-01", "2024-01-01T00:00:00.0001Z", "1900-02-29", "2000-02-29",
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 20_000 {
		ts := time.Unix(r.Int64N(253402300800+62167219200)-62167219200, r.Int64N(1e9)).UTC()
		texts = append(texts, ts.Format(time.RFC3339Nano), ts.Format(time.DateOnly), ts.Truncate(time.Millisecond).Format(time.RFC3339Nano))
	}
	// In pairs of one second too, which the cache reads.
	for _, s := range texts[:2000] {
		if len(s) > 19 {
			texts = append(texts, s, s[:19]+".5Z", s[:19]+"Z", s[:19]+".Z", s[:19]+".123456789Z")
		}
	}
	var c clockCache
	for _, s := range texts {
		want, wantErr := parseISO(s)
		got, err := c.millis(s)
		if wantErr != nil {
			require.Error(t, err, s)
			continue
		}
		require.NoError(t, err, s)
		require.Equal(t, want, got, s)
	}
}

// FuzzClockMillisIsParseISO: whatever the text, and whatever second the
// cache holds from the text before, the clock reads what parseISO reads
// and refuses what it refuses; JSON and CSV times go through it too.
func FuzzClockMillisIsParseISO(f *testing.F) {
	for _, s := range []string{"2024-02-29T12:34:56.789Z", "2024-02-29", "1970-01-01T00:00:00Z", "2024-01-01T00:00:60Z",
		"2024-01-01T00:00:00.1234567890Z", "2024-01-01T00:00:00+02:00", "0000-01-01T00:00:00.5Z", "2023-02-29"} {
		f.Add(s, s[:min(len(s), 19)]+".1Z")
	}
	f.Fuzz(func(t *testing.T, before, s string) {
		var c clockCache
		_, _ = c.millis(before)
		want, wantErr := parseISO(s)
		got, err := c.millis(s)
		if (wantErr != nil) != (err != nil) || wantErr == nil && want != got {
			t.Fatalf("after %q, millis(%q) = %d, %v; parseISO: %d, %v", before, s, got, err, want, wantErr)
		}
		if wantErr != nil && err.Error() != wantErr.Error() {
			t.Fatalf("millis(%q) fails with %q, parseISO with %q", s, err, wantErr)
		}
	})
}
