// Package parse turns Kafka message values into rows as a spec describes
// them: the row's time from the timestamp column, truncated to the query
// granularity, and its dimension values.
package parse

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"handoff/internal/domain"
)

// Parser parses the JSON messages of one spec. It is safe for concurrent use.
type Parser struct {
	tsColumn string
	tsFormat string
	dims     []string
	query    domain.Granularity
}

// New returns a parser for the spec's data schema.
func New(s domain.DataSchema) *Parser {
	return &Parser{
		tsColumn: s.TimestampSpec.Column,
		tsFormat: s.TimestampSpec.Format,
		dims:     s.DimensionsSpec.Dimensions,
		query:    s.GranularitySpec.QueryGranularity,
	}
}

// Parse parses one JSON object. Its error says what is wrong with the
// message; the caller adds where the message came from.
func (p *Parser) Parse(value []byte) (domain.Row, error) {
	var fields map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(value))
	dec.UseNumber()
	if err := dec.Decode(&fields); err != nil {
		return domain.Row{}, fmt.Errorf("not a JSON object: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return domain.Row{}, fmt.Errorf("not one JSON object: more follows at byte %d", dec.InputOffset())
	}
	if fields == nil {
		return domain.Row{}, fmt.Errorf("not a JSON object: null")
	}
	raw, ok := fields[p.tsColumn]
	if !ok {
		return domain.Row{}, fmt.Errorf("timestamp column %q is missing", p.tsColumn)
	}
	t, err := p.timestamp(raw)
	if err != nil {
		return domain.Row{}, fmt.Errorf("timestamp column %q: %w", p.tsColumn, err)
	}
	row := domain.Row{Time: p.query.Truncate(t).UnixMilli(), Dims: make([]string, len(p.dims))}
	for i, d := range p.dims {
		row.Dims[i] = dimension(fields[d])
	}
	return row, nil
}

func (p *Parser) timestamp(raw json.RawMessage) (time.Time, error) {
	s := string(raw)
	quoted := strings.HasPrefix(s, `"`)
	if quoted {
		if err := json.Unmarshal(raw, &s); err != nil {
			return time.Time{}, err
		}
	}
	switch p.tsFormat {
	case "iso":
		return parseISO(s)
	case "millis":
		return parseEpoch(s, time.Millisecond)
	case "seconds":
		return parseEpoch(s, time.Second)
	}
	// auto: numbers are milliseconds, strings ISO-8601 or numeric millis.
	if t, err := parseEpoch(s, time.Millisecond); err == nil {
		return t, nil
	}
	return parseISO(s)
}

func parseISO(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not an ISO-8601 time", s)
}

func parseEpoch(s string, unit time.Duration) (time.Time, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != f {
		return time.Time{}, fmt.Errorf("%q is not a number", s)
	}
	ms := math.Round(f * float64(unit/time.Millisecond))
	if ms > 1e15 || ms < -1e15 {
		return time.Time{}, fmt.Errorf("%s is out of range", s)
	}
	return time.UnixMilli(int64(ms)).UTC(), nil
}

// dimension renders a JSON value as a string dimension: strings as they are,
// null or missing as "", anything else as its JSON text.
func dimension(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	return string(raw)
}
