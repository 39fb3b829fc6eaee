package domain_test

// Regression tests for bugs found while writing duration_test.go.

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"handoff/internal/domain"
)

// Regression: the ISO-8601 branch of ParseDuration does not check for overflow.
// Atoi's error is ignored (it returns MaxInt64 on overflow) and products
// past MaxInt64 wrap around, so "P99999999999999999999D" is -24h,
// "P200000D" is negative, and "PT10000000000S" converts an out-of-range
// float to int64 — all with a nil error, although negative durations are
// refused.
func TestParseDurationISOOverflow(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"P99999999999999999999D",
		"PT99999999999999999999H",
		"P200000D",
		"PT3000000H",
		"PT10000000000S",
	} {
		got, err := domain.ParseDuration(in)
		assert.Error(t, err, "ParseDuration(%q) = %v, nil", in, got)
	}
}
