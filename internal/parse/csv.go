package parse

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"handoff/internal/domain"
)

type csvFormat struct {
	comma   rune
	columns []string // nil with header
	header  bool
}

func newCSV(in domain.InputFormat) (*csvFormat, error) {
	path := "ioConfig.inputFormat"
	delim := in.Delimiter
	if delim == "" {
		delim = ","
	}
	r, size := utf8.DecodeRuneInString(delim)
	// encoding/csv's own rule for a delimiter.
	if size != len(delim) || r == 0 || r == '"' || r == '\r' || r == '\n' || r == utf8.RuneError {
		return nil, &domain.FieldError{Path: path + ".delimiter", Msg: fmt.Sprintf("%q: want one character other than a quote or line break", in.Delimiter)}
	}
	c := &csvFormat{comma: r, header: in.FindColumnsFromHeader}
	if !c.header {
		if len(in.Columns) == 0 {
			return nil, &domain.FieldError{Path: path + ".columns", Msg: "required for csv: the column names in order (or set findColumnsFromHeader)"}
		}
		c.columns = slices.Clone(in.Columns)
	}
	return c, nil
}

// parseCSV reads each non-empty line as a row (after the header line, with
// findColumnsFromHeader).
func (p *Parser) parseCSV(msg string, now time.Time) error {
	r := csv.NewReader(strings.NewReader(msg))
	r.Comma = p.csv.comma
	r.ReuseRecord = true
	cols := p.csv.columns
	r.FieldsPerRecord = len(cols) // 0 with header: the header sets it
	var rejected *RejectedError
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return csvError(err, rec, len(cols))
		}
		line, _ := r.FieldPos(0)
		if cols == nil {
			if cols, err = headerColumns(rec, line); err != nil {
				return err
			}
			continue
		}
		rj, err := p.csvRow(cols, rec, now)
		if err != nil {
			var bad *UnparseableError
			if errors.As(err, &bad) {
				bad.Line = line
			}
			return err
		}
		if rejected == nil {
			rejected = rj
		}
	}
	switch {
	case rejected != nil:
		return rejected
	case len(p.rows) == 0 && cols != nil && p.csv.header:
		return unparseable("", "no rows after the header line")
	case len(p.rows) == 0:
		return unparseable("", "empty message: want CSV lines")
	}
	return nil
}

func (p *Parser) csvRow(cols, rec []string, now time.Time) (*RejectedError, error) {
	p.beginRow()
	for j, cell := range rec {
		f := field{kind: kindNull}
		if cell != "" {
			f = field{text: cell, kind: kindString}
		}
		if err := p.setTop(cols[j], f); err != nil {
			return nil, err
		}
	}
	return p.finishRow(now)
}

func headerColumns(rec []string, line int) ([]string, error) {
	cols := make([]string, len(rec))
	for i, name := range rec {
		if name == "" || slices.Contains(cols[:i], name) {
			return nil, &UnparseableError{Line: line, Msg: fmt.Sprintf("header column %d is %s: want a name used once", i+1, short(name))}
		}
		cols[i] = strings.Clone(name)
	}
	return cols, nil
}

func csvError(err error, rec []string, want int) error {
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return &UnparseableError{Msg: "not valid CSV: " + err.Error()}
	}
	if errors.Is(err, csv.ErrFieldCount) {
		return &UnparseableError{Line: pe.StartLine, Msg: fmt.Sprintf("%d fields: want %d, one per column", len(rec), want)}
	}
	at := fmt.Sprintf("column %d", pe.Column)
	if pe.Line != pe.StartLine {
		at = fmt.Sprintf("line %d, column %d", pe.Line, pe.Column)
	}
	return &UnparseableError{Line: pe.StartLine, Msg: fmt.Sprintf("not valid CSV at %s: %v", at, pe.Err)}
}
