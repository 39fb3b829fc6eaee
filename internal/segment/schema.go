// Package segment writes and reads the Parquet files that hold rows, both the
// staging chunks a consumer flushes and the segments it publishes: a
// "__time" timestamp column followed by one string column per dimension.
package segment

import (
	"fmt"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// TimeColumn is the name of the first column: the row time in Unix
// milliseconds, stored as TIMESTAMP(isAdjustedToUTC=true, MILLIS).
const TimeColumn = "__time"

// newSchema builds the file schema for dims. parquet.Group alone would sort
// its fields by name, so the group is wrapped to keep "__time" first and the
// dimensions in the caller's order.
func newSchema(dims []string) (*parquet.Schema, error) {
	group := make(parquet.Group, len(dims)+1)
	// Delta encoding makes sorted, granularity-truncated times nearly free.
	group[TimeColumn] = parquet.Encoded(parquet.Timestamp(parquet.Millisecond), &parquet.DeltaBinaryPacked)
	for _, d := range dims {
		if err := checkDimName(d); err != nil {
			return nil, err
		}
		if _, dup := group[d]; dup {
			return nil, fmt.Errorf("dimension %q appears twice", d)
		}
		// Dimensions are mostly low-cardinality: dictionary pages win.
		group[d] = parquet.Encoded(parquet.String(), &parquet.RLEDictionary)
	}
	byName := make(map[string]parquet.Field, len(group))
	for _, f := range group.Fields() {
		byName[f.Name()] = f
	}
	fields := make([]parquet.Field, 0, len(group))
	fields = append(fields, byName[TimeColumn])
	for _, d := range dims {
		fields = append(fields, byName[d])
	}
	return parquet.NewSchema("segment", &orderedGroup{Group: group, fields: fields}), nil
}

func checkDimName(d string) error {
	switch {
	case d == "":
		return fmt.Errorf("dimension name is empty")
	case d == TimeColumn:
		return fmt.Errorf("dimension name %q is reserved", d)
	case strings.ContainsRune(d, ','):
		// parquet-go derives Go struct tags from field names.
		return fmt.Errorf("dimension name %q contains a comma", d)
	}
	return nil
}

// orderedGroup is a parquet.Group whose fields keep a chosen order. The
// embedded Group supplies GoType (fields are matched by name there, so its
// sorted order does no harm); the file layout follows Fields.
type orderedGroup struct {
	parquet.Group
	fields []parquet.Field
}

func (g *orderedGroup) Fields() []parquet.Field { return g.fields }

func (g *orderedGroup) String() string {
	var b strings.Builder
	_ = parquet.PrintSchema(&b, "", g)
	return b.String()
}
