package parse

import (
	"cmp"
	"fmt"
	"slices"

	"handoff/internal/decode"
	"handoff/internal/domain"
)

// New returns a parser for the spec's data schema and input format. It
// checks what it relies on (the spec's Validate checks more) and fills the
// defaults ApplyDefaults would.
func New(ds domain.DataSchema, io domain.IOConfig) (*Parser, error) {
	p := &Parser{
		tsColumn:  ds.TimestampSpec.Column,
		tsFormat:  cmp.Or(ds.TimestampSpec.Format, "auto"),
		late:      io.LateMessageRejectionPeriod.D(),
		early:     io.EarlyMessageRejectionPeriod.D(),
		filter:    ds.Filter,
		metrics:   slices.Clip(slices.Clone(ds.MetricsSpec)),
		filterDim: -1,
		keys:      map[string]keyInfo{},
		discover:  ds.Discovers(),
		interned:  map[string]string{},
		rollup:    ds.GranularitySpec.RollupOn(),
	}
	if err := p.checkSchema(ds); err != nil {
		return nil, err
	}
	in := io.InputFormat
	if in.Type == domain.InputKafka {
		if in.ValueFormat == nil {
			return nil, &domain.FieldError{Path: "ioConfig.inputFormat.valueFormat", Msg: "required for kafka"}
		}
		k, err := newKafkaFields(in)
		if err != nil {
			return nil, err
		}
		p.kafka, p.binary, in = k, true, *in.ValueFormat
	}
	switch cmp.Or(in.Type, domain.InputJSON) {
	case domain.InputJSON:
		p.topFields = in.FlattenSpec.DiscoversFields()
		if err := p.addFlatten(in.FlattenSpec); err != nil {
			return nil, err
		}
	case domain.InputAvroStream, domain.InputProtobuf, domain.InputJSONSchema:
		dec, unframe, err := newDecoder(in, "ioConfig.inputFormat", decode.Options{BinaryAsString: in.BinaryAsString, Numeric: numericFields(ds)})
		if err != nil {
			return nil, err
		}
		p.dec, p.unframe, p.sink = dec, unframe, newValueSink(p)
		p.binary = p.binary || dec != nil
		p.topFields = in.FlattenSpec.DiscoversFields()
		if err := p.addFlatten(in.FlattenSpec); err != nil {
			return nil, err
		}
	case domain.InputCSV:
		c, err := newCSV(in)
		if err != nil {
			return nil, err
		}
		p.csv, p.topFields = c, true
	default:
		return nil, &domain.FieldError{Path: "ioConfig.inputFormat.type", Msg: fmt.Sprintf("%q is not an input format: want json, csv, avro_stream, protobuf, json_schema or kafka", in.Type)}
	}
	p.wire(ds)
	p.addTopicDim(io.TopicDimension)
	p.freezeKeys()
	p.direct = newDirect(p)
	return p, nil
}

// maxListedKeys: up to this many fixed keys, comparing the key with each
// (lengths first) beats hashing it; a message's fields are looked up once
// each, so this is on the hot path.
const maxListedKeys = 16

// freezeKeys lists the keys when they can no longer change: when the
// dimensions are declared (discovery adds and forgets keys).
func (p *Parser) freezeKeys() {
	if p.discover || len(p.keys) > maxListedKeys {
		return
	}
	for k, ki := range p.keys {
		p.keyNames = append(p.keyNames, k)
		p.keyInfos = append(p.keyInfos, ki)
	}
}

// lookupKey finds a top-level field's keyInfo.
func (p *Parser) lookupKey(key string) (keyInfo, bool) {
	if p.keyNames == nil {
		ki, ok := p.keys[key]
		return ki, ok
	}
	for i, k := range p.keyNames {
		if k == key {
			return p.keyInfos[i], true
		}
	}
	return keyInfo{}, false
}

func (p *Parser) checkSchema(ds domain.DataSchema) error {
	if p.tsColumn == "" {
		return &domain.FieldError{Path: "dataSchema.timestampSpec.column", Msg: "required: the input field holding each row's time"}
	}
	if !validTimestampFormat(p.tsFormat) {
		return &domain.FieldError{Path: "dataSchema.timestampSpec.format", Msg: fmt.Sprintf("%q: want iso, millis, seconds, auto, or a Go time layout", p.tsFormat)}
	}
	if g := ds.GranularitySpec.QueryGranularity; g != "" {
		q, err := domain.ParseGranularity(string(g))
		if err != nil {
			return &domain.FieldError{Path: "dataSchema.granularitySpec.queryGranularity", Msg: err.Error()}
		}
		p.query = q
	}
	if p.late < 0 || p.early < 0 {
		return &domain.FieldError{Path: "ioConfig.lateMessageRejectionPeriod", Msg: "want 0 or more"}
	}
	if f := p.filter; f != nil && (f.Type != "selector" || f.Dimension == "") {
		return &domain.FieldError{Path: "dataSchema.filter", Msg: "want a selector filter naming a dimension"}
	}
	for i, d := range ds.DimensionsSpec.Dimensions {
		t := cmp.Or(d.Type, domain.TypeString)
		if t != domain.TypeString && t != domain.TypeLong && t != domain.TypeDouble {
			return &domain.FieldError{Path: fmt.Sprintf("dataSchema.dimensionsSpec.dimensions[%d].type", i), Msg: fmt.Sprintf("%q: want string, long or double", d.Type)}
		}
		p.declared = append(p.declared, domain.Column{Name: d.Name, Type: t})
	}
	return nil
}

// addFlatten compiles the flattenSpec's fields. They come first: a
// flattened field shadows a top-level field of the same name.
func (p *Parser) addFlatten(fs *domain.FlattenSpec) error {
	if fs == nil {
		return nil
	}
	seen := map[string]bool{}
	for i, ff := range fs.Fields {
		path := fmt.Sprintf("ioConfig.inputFormat.flattenSpec.fields[%d]", i)
		if ff.Name == "" || seen[ff.Name] {
			return &domain.FieldError{Path: path + ".name", Msg: fmt.Sprintf("%q: want a name used once", ff.Name)}
		}
		seen[ff.Name] = true
		f := flatField{name: ff.Name, dim: -1}
		switch ff.Type {
		case "root":
			f.slot = p.slotOf(cmp.Or(ff.Expr, ff.Name))
		case "path":
			steps, err := compilePath(ff.Expr)
			if err != nil {
				return &domain.FieldError{Path: path + ".expr", Msg: err.Error()}
			}
			f.slot, f.steps = -1, steps[1:]
			if steps[0].index < 0 {
				f.slot = p.slotOf(steps[0].key)
			}
		default:
			return &domain.FieldError{Path: path + ".type", Msg: fmt.Sprintf("%q: want root or path", ff.Type)}
		}
		p.flat = append(p.flat, f)
	}
	p.flatVals = make([]field, len(p.flat))
	return nil
}

// wire finds the source of every input the spec names and marks the
// fields discovery leaves out.
func (p *Parser) wire(ds domain.DataSchema) {
	p.tsSrc = p.sourceOf(p.tsColumn)
	for _, d := range p.declared {
		p.dimSrc = append(p.dimSrc, p.sourceOf(d.Name))
	}
	p.metSrc = make([]source, len(p.metrics))
	for i, m := range p.metrics {
		p.metSrc[i] = source{flat: -1, slot: -1}
		if m.FieldName != "" {
			p.metSrc[i] = p.sourceOf(m.FieldName)
		}
	}
	if p.filter != nil {
		p.filterSrc = p.sourceOf(p.filter.Dimension)
		p.filterDim = slices.IndexFunc(p.declared, func(c domain.Column) bool { return c.Name == p.filter.Dimension })
	}
	if !p.discover {
		return
	}
	excluded := append([]string{p.tsColumn}, ds.DimensionsSpec.DimensionExclusions...)
	for _, m := range p.metrics {
		excluded = append(excluded, m.FieldName)
	}
	for i := range p.flat {
		if p.topFields {
			p.neverDim(p.flat[i].name) // the flattened field is discovered instead
		}
		p.flat[i].excluded = slices.Contains(excluded, p.flat[i].name)
	}
	for _, name := range excluded {
		p.neverDim(name)
	}
}

func (p *Parser) neverDim(name string) {
	ki, ok := p.keys[name]
	if !ok {
		ki.slot = -1
	}
	ki.dim = noDim
	p.keys[name] = ki
}

// slotOf gives the top-level field a slot that sources read.
func (p *Parser) slotOf(name string) int {
	ki, ok := p.keys[name]
	if !ok {
		ki = keyInfo{slot: -1, dim: -1}
	}
	if ki.slot < 0 {
		ki.slot = len(p.top)
		p.top = append(p.top, field{})
	}
	p.keys[name] = ki
	return ki.slot
}

func (p *Parser) sourceOf(name string) source {
	if i := slices.IndexFunc(p.flat, func(f flatField) bool { return f.name == name }); i >= 0 {
		return source{flat: i, slot: -1}
	}
	if p.topFields || (p.kafka != nil && p.kafka.isMeta(name)) {
		return source{flat: -1, slot: p.slotOf(name)}
	}
	return source{flat: -1, slot: -1}
}
