package domain_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

func TestParseDurationAccepts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"0s", 0},
		{"10m", 10 * time.Minute},
		{"1h30m", 90 * time.Minute},
		{"250ms", 250 * time.Millisecond},
		{"1.5h", 90 * time.Minute},
		{"PT10M", 10 * time.Minute},
		{"PT1H30M", 90 * time.Minute},
		{"PT1H", time.Hour},
		{"PT45S", 45 * time.Second},
		{"PT0.5S", 500 * time.Millisecond},
		{"PT1.25S", 1250 * time.Millisecond},
		{"P1D", 24 * time.Hour},
		{"P2DT3H4M5S", 2*24*time.Hour + 3*time.Hour + 4*time.Minute + 5*time.Second},
		{"PT0S", 0},
		{"PT90M", 90 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := domain.ParseDuration(tt.in)
			require.NoError(t, err)
			require.Equal(t, tt.want, got)

			// The JSON form reads the same.
			var d domain.Duration
			require.NoError(t, json.Unmarshal(mustJSON(t, tt.in), &d))
			require.Equal(t, tt.want, d.D())
		})
	}
}

func TestParseDurationRefuses(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"soon", "10", "P", "PT", "T10M", "P1W", "P1Y", "PT10m", "pt10m", "PT1M30", "P1.5D",
		"PT1H30M extra", " 10m", "10 m", "-10m", "-1s", "-PT10M", "PT-10M", "P-1D", "-1h30m",
	} {
		t.Run(in, func(t *testing.T) {
			t.Parallel()
			got, err := domain.ParseDuration(in)
			require.Error(t, err, "ParseDuration(%q) = %v", in, got)
			require.Contains(t, err.Error(), in)

			var d domain.Duration
			require.Error(t, json.Unmarshal(mustJSON(t, in), &d))
		})
	}
}

func TestParseDurationNegativeSaysSo(t *testing.T) {
	t.Parallel()
	_, err := domain.ParseDuration("-10m")
	require.ErrorContains(t, err, "negative")
}

func TestDurationJSONRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		d    domain.Duration
		json string
	}{
		{0, `""`},
		{domain.Duration(10 * time.Minute), `"10m0s"`},
		{domain.Duration(90 * time.Minute), `"1h30m0s"`},
		{domain.Duration(500 * time.Millisecond), `"500ms"`},
		{domain.Duration(48 * time.Hour), `"48h0m0s"`},
		{domain.Duration(time.Nanosecond), `"1ns"`},
	}
	for _, tt := range tests {
		t.Run(tt.json, func(t *testing.T) {
			t.Parallel()
			b, err := json.Marshal(tt.d)
			require.NoError(t, err)
			require.Equal(t, tt.json, string(b))

			var back domain.Duration
			require.NoError(t, json.Unmarshal(b, &back))
			require.Equal(t, tt.d, back)

			// Inside a struct, by value and by pointer.
			type wrap struct {
				D domain.Duration  `json:"d"`
				P *domain.Duration `json:"p"`
			}
			d := tt.d
			wb, err := json.Marshal(wrap{D: tt.d, P: &d})
			require.NoError(t, err)
			var w wrap
			require.NoError(t, json.Unmarshal(wb, &w))
			require.Equal(t, tt.d, w.D)
			require.NotNil(t, w.P)
			require.Equal(t, tt.d, *w.P)
		})
	}
}

func TestDurationUnmarshalRefusesNonStrings(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`30`, `30.5`, `true`, `{}`, `["10m"]`} {
		var d domain.Duration
		err := json.Unmarshal([]byte(in), &d)
		require.Error(t, err, in)
		require.Contains(t, err.Error(), "duration", in)
	}
	// JSON null is accepted (a spec may write "period": null for the default).
	var d domain.Duration
	require.NoError(t, json.Unmarshal([]byte(`null`), &d))
	require.Zero(t, d)
}

func TestDurationD(t *testing.T) {
	t.Parallel()
	require.Equal(t, 3*time.Second, domain.Duration(3*time.Second).D())
	require.Equal(t, 30*time.Second, domain.DefaultPeriod.D())
	require.Equal(t, time.Second, domain.DefaultChunkPeriod.D())
}
