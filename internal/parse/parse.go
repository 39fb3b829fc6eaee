// Package parse turns Kafka message values into rows as a spec describes
// them: the row's time from the timestamp column, truncated to the query
// granularity, typed dimension values (declared or discovered), and each
// metric's initial value. It reads JSON objects (with an optional
// flattenSpec) and CSV; Avro, Protobuf and JSON Schema through
// internal/decode (decoded.go); and, with the kafka input format, the
// record's own timestamp, topic, key and headers (record.go). JSON of the
// specs most pipelines run (declared dimensions, no flattenSpec) is read
// by a direct path (direct.go) that gives the general path's rows and
// errors, byte for byte, in about half its time.
package parse

import (
	"slices"
	"time"
	"unicode/utf8"
	"unsafe"

	"handoff/internal/decode"
	"handoff/internal/domain"
)

// Parser turns messages into rows for one spec. It is not safe for
// concurrent use (discovery state): use one per consume activity.
type Parser struct {
	tsColumn, tsFormat string
	query              domain.Granularity
	late, early        time.Duration // 0: keep all
	filter             *domain.Filter
	csv                *csvFormat // nil for JSON

	// Binary formats (decoded.go): dec for Avro and Protobuf, unframe for
	// JSON Schema; nil for JSON and CSV.
	dec     decode.Decoder
	sink    decode.Sink
	unframe func([]byte) ([]byte, error)
	binary  bool         // strings are checked one by one for UTF-8
	kafka   *kafkaFields // the kafka format (record.go), or nil
	rec     *Record      // the record ParseRecord is parsing

	// Where each input the spec names comes from.
	tsSrc, filterSrc source
	filterDim        int // index of the filter's declared dimension, or -1
	declared         []domain.Column
	dimSrc           []source
	metrics          []domain.MetricSpec
	metSrc           []source
	flat             []flatField

	// keys maps the top-level fields the parser cares about; with
	// discovery it grows with every new field.
	keys      map[string]keyInfo
	keyNames  []string   // keys listed once they are fixed (freezeKeys), else nil
	keyInfos  []keyInfo  // keys[keyNames[i]]
	clock     clockCache // the last second of an ISO time read (timestamp.go)
	discover  bool       // no dimensions declared
	topFields bool       // top-level fields are read by name (not only flattened ones)
	dimCols   []domain.Column

	// Per message.
	top      []field // by keyInfo.slot
	flatVals []field // by flat index
	dimVals  []field // by discovered dimension
	lastDim  int     // dimVals[lastDim:] are unset
	mark     int     // len(dimCols) when the message began
	badUTF8  bool
	rows     []domain.Row
	interned map[string]string
	rollup   bool           // rows of equal time and dimensions combine
	slab     []domain.Value // cells for the next rows (rollup off)
	views    bool           // rows are views, valid during emit (view.go)
	scratch  []domain.Value // the cells of the message's rows, with views

	topic   topicDim // ioConfig.topicDimension (topic.go)
	minDims int      // discovered dimensions every row has (the topic's)

	direct *direct // the JSON fast path (direct.go), or nil
}

// keyInfo is what a top-level field feeds: a slot read by a source (-1:
// none) and a discovered dimension (-1: not yet; noDim: never).
type keyInfo struct {
	slot, dim int
}

const noDim = -2

// source says where a named input is read: a flatten field, else a
// top-level slot, else nowhere (always missing).
type source struct {
	flat, slot int
}

type flatField struct {
	name     string
	slot     int // top-level slot of the root field or first path step; -1: none
	steps    []step
	dim      int // as keyInfo.dim
	excluded bool
}

// maxDiscoveredDims bounds schemaless discovery, so that messages with
// ever-new keys cannot grow a schema without end.
const maxDiscoveredDims = 10_000

// Parse parses one Kafka message value read at time now and calls emit for
// each row it holds (JSON: one; CSV: one per line, or per line after the
// header with findColumnsFromHeader). A message is all or nothing: if any
// of its rows is bad or thrown away, nothing is emitted. The error is an
// *UnparseableError, or (when every row parses) a *RejectedError for the
// first row thrown away; or, for the schema-registry formats, an error for
// which IsUnavailable holds: the registry is out of reach, the message may
// be fine, and the caller must retry it later rather than count it bad.
//
// value must not change during the call, and may change after: fields are
// views into it while Parse runs, and every string a row keeps is copied
// or interned.
func (p *Parser) Parse(value []byte, now time.Time, emit func(domain.Row)) error {
	if err := p.parse(value, now); err != nil {
		return err
	}
	for _, r := range p.rows {
		emit(r)
	}
	clear(p.rows)
	return nil
}

// parse parses value into p.rows, empty on error.
func (p *Parser) parse(value []byte, now time.Time) error {
	msg := unsafe.String(unsafe.SliceData(value), len(value))
	p.mark = len(p.dimCols)
	p.rows, p.scratch = p.rows[:0], p.scratch[:0]
	if p.direct != nil {
		if reject, ok := p.parseDirect(msg, now); ok {
			if reject != nil {
				return reject
			}
			return nil
		}
	}
	p.badUTF8 = p.binary || !utf8.ValidString(msg)
	var err error
	switch {
	case p.csv != nil:
		err = p.parseCSV(msg, now)
	case p.dec != nil:
		err = p.parseDecoded(value, now)
	case p.unframe != nil:
		err = p.parseFramedJSON(value, now)
	default:
		err = p.parseJSON(msg, now)
	}
	if err != nil {
		p.forget()
		clear(p.rows)
		p.rows = p.rows[:0]
		return err
	}
	return nil
}

// Schema is the declared schema or, with discovery, the dimensions
// discovered so far (string columns, in first-seen order) plus the
// metrics; with ioConfig.topicDimension, its column too (topic.go). Rows
// emitted before have no more dimensions than it.
func (p *Parser) Schema() domain.Schema {
	return domain.Schema{Dims: p.dimColumns(), Metrics: p.metrics}
}

// dimColumns is the declared dimensions, or the ones discovered so far.
func (p *Parser) dimColumns() []domain.Column {
	if p.discover {
		return slices.Clip(p.dimCols)
	}
	return p.declared
}

func (p *Parser) parseJSON(msg string, now time.Time) error {
	p.beginRow()
	if err := p.scanObject(msg); err != nil {
		return err
	}
	reject, err := p.finishRow(now)
	if err != nil {
		return err
	}
	if reject != nil {
		return reject
	}
	return nil
}

// scanObject reads the message's one object, setting each top-level field.
func (p *Parser) scanObject(msg string) error {
	sc := scanner{s: msg}
	sc.ws()
	switch {
	case sc.i == len(msg):
		return unparseable("", "empty message: want a JSON object")
	case msg[sc.i] != '{':
		if f, err := sc.value(1); err == nil {
			return unparseable("", "want a JSON object, got %s", describe(f))
		}
		return sc.fail("want a JSON object")
	}
	sc.i++
	sc.ws()
	if sc.i < len(msg) && msg[sc.i] == '}' {
		sc.i++
	} else if err := p.members(&sc); err != nil {
		return err
	}
	sc.ws()
	if sc.i != len(msg) {
		return unparseable("", "not one JSON object: more follows at byte %d", sc.i)
	}
	return nil
}

func (p *Parser) members(sc *scanner) error {
	for {
		if sc.i >= len(sc.s) || sc.s[sc.i] != '"' {
			return sc.fail("want a key string")
		}
		start := sc.i
		key, esc, err := sc.str()
		if err != nil {
			return err
		}
		if esc {
			key = unescape(sc.s[start:sc.i])
		}
		sc.ws()
		if err := sc.expect(':', "':' after a key"); err != nil {
			return err
		}
		sc.ws()
		f, err := sc.value(1)
		if err != nil {
			return err
		}
		if err := p.setTop(key, f); err != nil {
			return err
		}
		sc.ws()
		if sc.i < len(sc.s) && sc.s[sc.i] == ',' {
			sc.i++
			sc.ws()
			continue
		}
		return sc.expect('}', "',' or '}'")
	}
}
