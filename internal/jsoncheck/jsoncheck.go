// Package jsoncheck holds every JSON document the project emits (the
// worker's status page, the starter's -o json, the benchmark's results file)
// to one convention: lowerCamel keys, and durations as strings that
// time.ParseDuration reads back ("250ms"), never bare integers. Tests fill a
// value with Fill, marshal it, and pass the document to Check.
package jsoncheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// Sentinel is the value Fill gives every time.Duration: a number no count
// or size in a filled value has, so Check recognises it wherever a
// duration leaked through as a number, in any unit.
const Sentinel = 1234567891 * time.Nanosecond

// Fill sets every field reachable from v (a pointer), exported or not, to
// a non-zero value, so omitempty drops nothing and every field shows in
// the JSON: durations to Sentinel, other numbers to 7, strings to "x",
// times to a fixed instant, a json.RawMessage to "x", slices and maps to one element. Interfaces and
// recursive types past a few levels stay nil.
func Fill(v any) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		panic("jsoncheck.Fill: want a non-nil pointer")
	}
	fill(rv.Elem(), 0)
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	timeType     = reflect.TypeFor[time.Time]()
	rawType      = reflect.TypeFor[json.RawMessage]()
	filledTime   = time.Date(2025, 6, 1, 12, 30, 0, 0, time.UTC)
)

const maxDepth = 16

func fill(v reflect.Value, depth int) {
	if depth > maxDepth {
		return
	}
	if !v.CanSet() {
		v = reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
	}
	switch t := v.Type(); {
	case t == durationType:
		v.SetInt(int64(Sentinel))
		return
	case t == timeType:
		v.Set(reflect.ValueOf(filledTime))
		return
	case t == rawType:
		v.SetBytes([]byte(`"x"`))
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(7)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(0.25)
	case reflect.String:
		v.SetString("x")
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Array:
		for i := range v.Len() {
			fill(v.Index(i), depth+1)
		}
	case reflect.Map:
		m := reflect.MakeMapWithSize(v.Type(), 1)
		k := reflect.New(v.Type().Key()).Elem()
		fill(k, depth+1)
		e := reflect.New(v.Type().Elem()).Elem()
		fill(e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i), depth+1)
		}
	}
}

// Check decodes doc (one JSON value, or several in a row as a watch
// prints them) and reports every key that starts with an upper-case letter
// (a Go field name without a json tag) and every number that is Sentinel
// in nanoseconds, microseconds, milliseconds or seconds (a duration
// written as a number), each with its path.
func Check(doc []byte) error {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var errs []error
	for n := 0; ; n++ {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			if n == 0 {
				return errors.New("no JSON value")
			}
			return errors.Join(errs...)
		}
		if err != nil {
			return fmt.Errorf("decode: %w", err)
		}
		walk(v, "$", &errs)
	}
}

var sentinelNumbers = map[string]bool{}

func init() {
	for _, unit := range []time.Duration{time.Nanosecond, time.Microsecond, time.Millisecond, time.Second} {
		sentinelNumbers[strconv.FormatFloat(float64(Sentinel)/float64(unit), 'f', -1, 64)] = true
	}
}

func walk(v any, path string, errs *[]error) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			p := path + "." + k
			if r, _ := utf8.DecodeRuneInString(k); unicode.IsUpper(r) {
				*errs = append(*errs, fmt.Errorf("%s: key %q is a Go field name, want lowerCamel (a json tag)", p, k))
			}
			walk(e, p, errs)
		}
	case []any:
		for i, e := range v {
			walk(e, path+"["+strconv.Itoa(i)+"]", errs)
		}
	case json.Number:
		if f, err := strconv.ParseFloat(string(v), 64); err == nil && sentinelNumbers[strconv.FormatFloat(f, 'f', -1, 64)] {
			*errs = append(*errs, fmt.Errorf("%s: %s is a duration as a number, want a string such as %q", path, v, Sentinel.String()))
		}
	}
}
