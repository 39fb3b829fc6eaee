package segment

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/parquet-go/parquet-go"

	"handoff/internal/domain"
)

// ReadFile reads a file written by Write: its dimension names, in column
// order, and its rows, in file order.
func ReadFile(path string) (dims []string, rows []domain.Row, err error) {
	dims, rows, err = readFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read segment %s: %w", path, err)
	}
	return dims, rows, nil
}

func readFile(path string) ([]string, []domain.Row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, nil, err
	}
	dims, err := checkSchema(pf.Schema())
	if err != nil {
		return nil, nil, err
	}
	rows, err := readRows(parquet.NewReader(pf), pf.NumRows(), len(dims))
	if err != nil {
		return nil, nil, err
	}
	return dims, rows, nil
}

// checkSchema accepts "__time" INT64 first, then required string columns,
// and returns the names of the latter.
func checkSchema(s *parquet.Schema) ([]string, error) {
	fields := s.Fields()
	if len(fields) == 0 || fields[0].Name() != TimeColumn {
		return nil, fmt.Errorf("first column is not %q", TimeColumn)
	}
	if t := fields[0]; !t.Leaf() || !t.Required() || t.Type().Kind() != parquet.Int64 {
		return nil, fmt.Errorf("column %q is not a required INT64", TimeColumn)
	}
	dims := make([]string, 0, len(fields)-1)
	for _, f := range fields[1:] {
		if !f.Leaf() || !f.Required() || f.Type().Kind() != parquet.ByteArray {
			return nil, fmt.Errorf("column %q is not a required string", f.Name())
		}
		dims = append(dims, f.Name())
	}
	return dims, nil
}

func readRows(r *parquet.Reader, numRows int64, numDims int) ([]domain.Row, error) {
	defer r.Close()
	rows := make([]domain.Row, 0, numRows)
	// One backing array for every row's Dims keeps allocations per file, not per row.
	dimVals := make([]string, numRows*int64(numDims))
	batch := make([]parquet.Row, batchRows)
	for {
		n, err := r.ReadRows(batch)
		for _, pr := range batch[:n] {
			if len(pr) != numDims+1 || int64(len(rows)) >= numRows {
				return nil, fmt.Errorf("row %d does not match the schema", len(rows))
			}
			i := len(rows) * numDims
			row := domain.Row{Time: pr[0].Int64()}
			if numDims > 0 {
				row.Dims = dimVals[i : i+numDims : i+numDims]
			}
			for d, v := range pr[1:] {
				row.Dims[d] = string(v.ByteArray())
			}
			rows = append(rows, row)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read rows: %w", err)
		}
		if n == 0 {
			return nil, fmt.Errorf("reader stalled at row %d", len(rows))
		}
	}
	if int64(len(rows)) != numRows {
		return nil, fmt.Errorf("read %d rows, footer says %d", len(rows), numRows)
	}
	return rows, nil
}
