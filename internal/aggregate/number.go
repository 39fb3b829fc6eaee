package aggregate

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// parseLong reads an integer, or a float with no fractional part inside the
// int64 range ("12.0", "1e3"): JSON producers often write longs as floats.
func parseLong(raw string) (int64, error) {
	if n, err := strconv.ParseInt(raw, 10, 64); err == nil {
		return n, nil
	}
	f, err := parseDouble(raw)
	if err != nil {
		return 0, err
	}
	switch {
	case f != math.Trunc(f):
		return 0, fmt.Errorf("%q is not an integer", raw)
	case f < -(1<<63) || f >= 1<<63:
		return 0, fmt.Errorf("%q is out of the long range", raw)
	}
	return int64(f), nil
}

// parseDouble reads a finite float. NaN and infinities are refused: they
// would poison every sum, min and max they are combined into.
func parseDouble(raw string) (float64, error) {
	f, err := strconv.ParseFloat(raw, 64)
	switch {
	case errors.Is(err, strconv.ErrRange) && math.IsInf(f, 0):
		return 0, fmt.Errorf("%q is out of the double range", raw)
	case err != nil || math.IsNaN(f) || math.IsInf(f, 0):
		return 0, fmt.Errorf("%q is not a number", raw)
	}
	return f, nil
}
