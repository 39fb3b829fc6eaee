package domain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// DimensionSpec is one dimension column: its name and type.
type DimensionSpec struct {
	Name string     `json:"name"`
	Type ColumnType `json:"type,omitempty"` // string (default), long or double
}

// UnmarshalJSON takes a plain name ("page") or an object
// ({"name": "bytes", "type": "long"}).
func (d *DimensionSpec) UnmarshalJSON(b []byte) error {
	if bytes.HasPrefix(bytes.TrimSpace(b), []byte(`"`)) {
		d.Type = TypeString
		return json.Unmarshal(b, &d.Name)
	}
	type plain DimensionSpec
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode((*plain)(d))
}

// Metric types.
const (
	MetricCount       = "count"
	MetricLongSum     = "longSum"
	MetricDoubleSum   = "doubleSum"
	MetricLongMin     = "longMin"
	MetricLongMax     = "longMax"
	MetricDoubleMin   = "doubleMin"
	MetricDoubleMax   = "doubleMax"
	MetricHyperUnique = "hyperUnique" // HyperLogLog distinct count, mergeable
)

// MetricSpec is one metric column: an aggregator over an input field.
type MetricSpec struct {
	Type string `json:"type"`
	Name string `json:"name"`
	// FieldName is the input field aggregated (all but count).
	FieldName string `json:"fieldName,omitempty"`
}

// ColumnType is the column type the metric is stored as.
func (m MetricSpec) ColumnType() ColumnType {
	switch m.Type {
	case MetricCount, MetricLongSum, MetricLongMin, MetricLongMax:
		return TypeLong
	case MetricDoubleSum, MetricDoubleMin, MetricDoubleMax:
		return TypeDouble
	}
	return TypeSketch
}

// Filter keeps only the rows whose dimension equals the value (Druid's
// selector filter).
type Filter struct {
	Type      string `json:"type"` // selector
	Dimension string `json:"dimension"`
	Value     string `json:"value"`
}

// reservedName: __time and every name starting with __ belong to handoff.
func reservedName(n string) bool { return strings.HasPrefix(n, "__") }

// validateColumns checks dimensions and metrics: names present, unique
// across both, not reserved, types known, inputs named.
func validateColumns(ds DataSchema) error {
	seen := map[string]string{}
	claim := func(path, name string) error {
		switch {
		case name == "":
			return &FieldError{Path: path, Msg: "empty name"}
		case name == ds.TimestampSpec.Column || reservedName(name):
			return &FieldError{Path: path, Msg: fmt.Sprintf("%q is reserved (the timestamp column or a name starting with __)", name)}
		case seen[name] != "":
			return &FieldError{Path: path, Msg: fmt.Sprintf("%q is already the name of %s", name, seen[name])}
		}
		seen[name] = path
		return nil
	}
	for i, d := range ds.DimensionsSpec.Dimensions {
		path := fmt.Sprintf("dataSchema.dimensionsSpec.dimensions[%d]", i)
		if err := claim(path, d.Name); err != nil {
			return err
		}
		switch d.Type {
		case TypeString, TypeLong, TypeDouble, "":
		default:
			return &FieldError{Path: path + ".type", Msg: fmt.Sprintf("%q is not a dimension type: want string, long or double", d.Type)}
		}
	}
	for i, m := range ds.MetricsSpec {
		path := fmt.Sprintf("dataSchema.metricsSpec[%d]", i)
		switch m.Type {
		case MetricCount:
		case MetricLongSum, MetricDoubleSum, MetricLongMin, MetricLongMax, MetricDoubleMin, MetricDoubleMax, MetricHyperUnique:
			if m.FieldName == "" {
				return &FieldError{Path: path + ".fieldName", Msg: fmt.Sprintf("required: the input field that %s aggregates", m.Type)}
			}
		default:
			return &FieldError{Path: path + ".type", Msg: fmt.Sprintf("%q is not a metric type: want count, longSum, doubleSum, longMin, longMax, doubleMin, doubleMax or hyperUnique", m.Type)}
		}
		if err := claim(path+".name", m.Name); err != nil {
			return err
		}
	}
	for i, e := range ds.DimensionsSpec.DimensionExclusions {
		if e == "" {
			return &FieldError{Path: fmt.Sprintf("dataSchema.dimensionsSpec.dimensionExclusions[%d]", i), Msg: "empty name"}
		}
	}
	return nil
}

func validateFilter(ds DataSchema) error {
	f := ds.Filter
	if f == nil {
		return nil
	}
	switch {
	case f.Type != "selector":
		return &FieldError{Path: "dataSchema.filter.type", Msg: fmt.Sprintf("%q is not a filter type: want selector", f.Type)}
	case f.Dimension == "":
		return &FieldError{Path: "dataSchema.filter.dimension", Msg: "required: the dimension to compare"}
	}
	return nil
}

func validTimestampFormat(f string) bool {
	switch f {
	case "iso", "millis", "seconds", "auto":
		return true
	}
	// A Go layout names the reference time's parts.
	return strings.Contains(f, "2006") || strings.Contains(f, "15:04") || strings.Contains(f, "Jan")
}
