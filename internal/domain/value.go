package domain

import "math"

// ColumnType is the type of a dimension or metric column.
type ColumnType string

// Column types.
const (
	TypeString ColumnType = "string"
	TypeLong   ColumnType = "long"
	TypeDouble ColumnType = "double"
	// TypeSketch is a serialized HyperLogLog sketch (binary).
	TypeSketch ColumnType = "hllSketch"
)

// Column is one named, typed column after __time.
type Column struct {
	Name string
	Type ColumnType
}

// Value is one cell: a string (also a sketch's bytes), a long, or a double
// (its bits in N), or null. It is 32 bytes, so a row costs little more
// than its strings.
type Value struct {
	S    string
	N    uint64
	Null bool
}

// StringValue, LongValue, DoubleValue, BytesValue and NullValue make cells.
func StringValue(s string) Value  { return Value{S: s} }
func LongValue(n int64) Value     { return Value{N: uint64(n)} }
func DoubleValue(f float64) Value { return Value{N: math.Float64bits(f)} }
func BytesValue(b []byte) Value   { return Value{S: string(b)} }
func NullValue() Value            { return Value{Null: true} }
func (v Value) Long() int64       { return int64(v.N) }
func (v Value) Double() float64   { return math.Float64frombits(v.N) }
func (v Value) Bytes() []byte     { return []byte(v.S) }
func (v Value) IsNull() bool      { return v.Null }
func (v Value) String() string    { return v.S }
