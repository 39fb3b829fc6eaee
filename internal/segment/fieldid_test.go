package segment

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

// An Iceberg reader maps columns by Parquet field id: every column named in
// the ids carries its id, and the rows read back unchanged.
func TestWriterSetsIcebergFieldIDs(t *testing.T) {
	ids := FieldIDs{TimeColumn: 1, "zeta": 2, "Alpha": 3, "ünïcode": 4, "mid": 5, "count": 6, "sum_bytes": 7, "max_ratio": 8, "users": 9}
	var buf bytes.Buffer
	sw, err := NewWriterWithFieldIDs(&buf, everyType(), ids)
	require.NoError(t, err)
	rows := everyTypeRows(t)
	require.NoError(t, sw.Write(rows...))
	_, err = sw.Close()
	require.NoError(t, err)

	pf, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	require.NoError(t, err)
	got := map[string]int{}
	for _, el := range pf.Metadata().Schema[1:] {
		require.NotZero(t, el.FieldID, "column %s has no field id", el.Name)
		got[el.Name] = int(el.FieldID)
	}
	require.Equal(t, map[string]int(ids), got)

	path := filepath.Join(t.TempDir(), "ids.parquet")
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	_, back, err := ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, len(rows), len(back))
	for i := range rows {
		require.Equal(t, rows[i].Time, back[i].Time, "row %d time", i)
	}
}

// Files written before __time moved to microseconds (unit MILLIS) still
// read as the same Unix milliseconds.
func TestMillisecondFilesStillRead(t *testing.T) {
	schema := domain.Schema{Dims: []domain.Column{{Name: "page", Type: domain.TypeString}}}
	meta, err := encodeSchema(schema)
	require.NoError(t, err)
	group := parquet.Group{
		TimeColumn: parquet.Timestamp(parquet.Millisecond),
		"page":     parquet.Optional(parquet.String()),
	}
	var buf bytes.Buffer
	pw := parquet.NewWriter(&buf, parquet.NewSchema("segment", &orderedGroup{Group: group, fields: group.Fields()}),
		parquet.KeyValueMetadata(SchemaKey, meta))
	_, err = pw.WriteRows([]parquet.Row{
		{parquet.Int64Value(1_700_000_000_123).Level(0, 0, 0), parquet.ByteArrayValue([]byte("a")).Level(0, 1, 1)},
		{parquet.Int64Value(-5).Level(0, 0, 0), parquet.ByteArrayValue([]byte("b")).Level(0, 1, 1)},
	})
	require.NoError(t, err)
	require.NoError(t, pw.Close())
	path := filepath.Join(t.TempDir(), "millis.parquet")
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))

	_, rows, err := ReadFile(path)
	require.NoError(t, err)
	require.Len(t, rows, 2)
	require.Equal(t, int64(1_700_000_000_123), rows[0].Time)
	require.Equal(t, int64(-5), rows[1].Time)
}
