package domain

// Row is one parsed input row: its time (Unix milliseconds, truncated to the
// query granularity) and its dimension values, aligned with the spec's
// dimensions (a missing field is "").
type Row struct {
	Time int64
	Dims []string
}
