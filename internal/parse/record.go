package parse

import (
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"handoff/internal/decode"
	"handoff/internal/domain"
)

// The kafka input format (Druid's): the record's value is parsed by
// valueFormat, and the record's own fields join its top-level fields as
// columns: its timestamp (Unix milliseconds, for timestampSpec format
// millis), topic, key (as text, or the first field of keyFormat), each
// header (a string column named headerColumnPrefix and the header's key),
// and, when named, its partition and offset. A payload field of the same
// name wins, as in Druid. They reach the parser through ParseRecord.

// Record is what ParseRecord reads of a Kafka record.
type Record struct {
	Topic     string
	Partition int32
	Offset    int64
	Time      time.Time
	Key       []byte
	Headers   map[string]string
	Value     []byte
}

type kafkaFields struct {
	ts, topic, key, prefix, partition, offset string
	latin1                                    bool
	keyDec                                    decode.Decoder
	keyUnframe                                func([]byte) ([]byte, error)
	keyJSON                                   bool
	num                                       []byte
	names                                     []string // header column names, reused
}

// newKafkaFields reads the kafka format's settings (defaults applied).
func newKafkaFields(in domain.InputFormat) (*kafkaFields, error) {
	k := &kafkaFields{
		ts: cmpOr(in.TimestampColumnName, domain.DefaultKafkaTimestampColumn), topic: cmpOr(in.TopicColumnName, domain.DefaultKafkaTopicColumn),
		key: cmpOr(in.KeyColumnName, domain.DefaultKafkaKeyColumn), prefix: cmpOr(in.HeaderColumnPrefix, domain.DefaultKafkaHeaderPrefix),
		partition: in.PartitionColumnName, offset: in.OffsetColumnName,
		latin1: in.HeaderFormat != nil && in.HeaderFormat.Encoding == "ISO-8859-1",
	}
	if kf := in.KeyFormat; kf != nil {
		switch kf.Type {
		case domain.InputJSON, "":
			k.keyJSON = true
		case domain.InputAvroStream, domain.InputProtobuf, domain.InputJSONSchema:
			var err error
			if k.keyDec, k.keyUnframe, err = newDecoder(*kf, "ioConfig.inputFormat.keyFormat", decode.Options{BinaryAsString: kf.BinaryAsString}); err != nil {
				return nil, err
			}
			k.keyJSON = k.keyUnframe != nil
		default:
			return nil, &domain.FieldError{Path: "ioConfig.inputFormat.keyFormat.type", Msg: "want json, avro_stream, protobuf or json_schema; without keyFormat the key is read as text"}
		}
	}
	return k, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// isMeta: the column is one of the record's own.
func (k *kafkaFields) isMeta(name string) bool {
	return name == k.ts || name == k.topic || name == k.key || strings.HasPrefix(name, k.prefix) ||
		(k.partition != "" && name == k.partition) || (k.offset != "" && name == k.offset)
}

// ParseRecord parses a Kafka record as Parse parses its value; with the
// kafka input format its own fields are columns too.
func (p *Parser) ParseRecord(r *Record, now time.Time, emit func(domain.Row)) error {
	p.rec = r
	defer func() { p.rec = nil }()
	return p.Parse(r.Value, now, emit)
}

// ParseRecordView parses a record as ParseRecord does, but each row passed
// to emit is a view (view.go), valid only until emit returns.
func (p *Parser) ParseRecordView(r *Record, now time.Time, emit func(*domain.Row)) error {
	p.rec, p.views = r, true
	err := p.parse(r.Value, now)
	p.rec, p.views = nil, false
	if err != nil {
		return err
	}
	for i := range p.rows {
		emit(&p.rows[i])
	}
	clear(p.rows)
	return nil
}

// recordFields sets the record's own fields of the row being built.
func (p *Parser) recordFields() error {
	k, r := p.kafka, p.rec
	if k == nil || r == nil {
		return nil
	}
	k.num = k.num[:0]
	if !r.Time.IsZero() {
		if err := p.setMeta(k.ts, p.numberField(r.Time.UnixMilli())); err != nil {
			return err
		}
	}
	if err := p.setMeta(k.topic, field{text: r.Topic, kind: kindString}); err != nil {
		return err
	}
	key, err := p.keyField(r.Key)
	if err != nil {
		return err
	}
	if err := p.setMeta(k.key, key); err != nil {
		return err
	}
	if err := p.headerFields(r.Headers); err != nil {
		return err
	}
	if k.partition != "" {
		if err := p.setMeta(k.partition, p.numberField(int64(r.Partition))); err != nil {
			return err
		}
	}
	if k.offset != "" {
		return p.setMeta(k.offset, p.numberField(r.Offset))
	}
	return nil
}

// numberField renders n into the record fields' buffer.
func (p *Parser) numberField(n int64) field {
	k := p.kafka
	start := len(k.num)
	k.num = strconv.AppendInt(k.num, n, 10)
	return field{text: string(k.num[start:]), kind: kindNumber}
}

// headerFields sets a column per header, in the order of their keys.
func (p *Parser) headerFields(h map[string]string) error {
	k := p.kafka
	k.names = k.names[:0]
	for name := range h {
		k.names = append(k.names, name)
	}
	slices.Sort(k.names)
	for _, name := range k.names {
		v := h[name]
		if k.latin1 {
			v = latin1(v)
		}
		if err := p.setMeta(k.prefix+name, field{text: v, kind: kindString}); err != nil {
			return err
		}
	}
	return nil
}

func latin1(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteRune(rune(s[i]))
	}
	return b.String()
}

// setMeta sets a record field unless the payload set a field of that name.
func (p *Parser) setMeta(name string, f field) error {
	if ki, ok := p.lookupKey(name); ok {
		if ki.slot >= 0 && p.top[ki.slot].kind != kindMissing {
			return nil
		}
		if ki.dim >= 0 && ki.dim < len(p.dimVals) && p.dimVals[ki.dim].kind != kindMissing {
			return nil
		}
	}
	return p.setTop(name, f)
}

// keyField is the key column's value: null without a key, its text, or
// the first field keyFormat decodes of it.
func (p *Parser) keyField(key []byte) (field, error) {
	k := p.kafka
	switch {
	case key == nil:
		return field{kind: kindNull}, nil
	case k.keyDec != nil:
		var first firstSink
		if err := k.keyDec.Decode(key, &first); err != nil {
			return field{}, keyError(decodeError(err))
		}
		return fieldOf(first.v), nil
	case k.keyJSON:
		if k.keyUnframe != nil {
			var err error
			if key, err = k.keyUnframe(key); err != nil {
				return field{}, keyError(decodeError(err))
			}
		}
		return firstJSON(string(key))
	}
	s := string(key)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return field{text: s, kind: kindString}, nil
}

func keyError(err error) error {
	if bad, ok := err.(*UnparseableError); ok {
		bad.Msg = "kafka key: " + bad.Msg
		return bad
	}
	return err
}

// firstJSON is a JSON key's first field: an object's first member, or the
// value itself.
func firstJSON(s string) (field, error) {
	sc := scanner{s: s}
	sc.ws()
	f, err := sc.value(1)
	if err != nil {
		return field{}, keyError(err)
	}
	if f.kind != kindObject {
		return f, nil
	}
	in := scanner{s: f.text, i: 1}
	in.ws()
	if in.i >= len(in.s) || in.s[in.i] != '"' {
		return field{kind: kindNull}, nil
	}
	if _, _, err := in.str(); err != nil {
		return field{}, keyError(err)
	}
	in.ws()
	in.i++ // ':' (validated)
	in.ws()
	v, err := in.value(1)
	if err != nil {
		return field{}, keyError(err)
	}
	return v, nil
}

// firstSink keeps a decoded key's first field (or the key itself, when
// its schema is not a record).
type firstSink struct {
	v   decode.Value
	got bool
}

func (s *firstSink) Column(string) (int, bool) { return 0, true } // asked once per schema: Field keeps the first
func (s *firstSink) Field(_ int, _ string, v decode.Value) error {
	if !s.got {
		s.v, s.got = v, true
	}
	return nil
}
func (s *firstSink) Scalar(v decode.Value) error { return s.Field(0, "", v) }
