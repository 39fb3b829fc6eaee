package parse

import (
	"strings"

	"handoff/internal/domain"
)

// The topic dimension (ioConfig.topicDimension) is a string dimension
// whose value is the Kafka topic of the message, as Kafka Connect's topic
// field is, set by the caller with SetTopic rather than read from the
// message:
//
//   - With declared dimensions it is the last one. It has no source: a
//     message field of the same name is not read for it (a metric whose
//     fieldName names that field still reads it).
//   - With schemaless discovery it is the first dimension, in Schema()
//     before any message, and every row has it. A top-level field (JSON
//     member or CSV column) or a flattenSpec field of the same name is
//     never discovered as a dimension: the topic wins.
//   - Either way a filter naming the dimension compares the topic, as a
//     filter on a declared dimension compares the row's value.
//   - Before the first SetTopic, and after SetTopic(""), it is null, as a
//     missing string field is (domain.NullValue); no Kafka topic has an
//     empty name.
//
// Per row it costs one write of a value made once per topic: rows of
// different topics differ in it, so rollup keeps them apart.

// topicDim is the parser's topic dimension.
type topicDim struct {
	index int               // in Schema().Dims; -1: no topic dimension
	value domain.Value      // the current topic's cell: null or name
	name  string            // the current topic ("": none), owned by the parser
	known map[string]string // topics set so far, interned (up to maxTopics)
}

// maxTopics bounds the interned topics; past it a new topic is copied each
// time it is set (a topicPattern matching thousands of topics).
const maxTopics = 1024

// addTopicDim adds the topic dimension named name ("" for none), once wire
// has found every source: after the declared dimensions, or as the first
// discovered one, which discovery must then leave out.
func (p *Parser) addTopicDim(name string) {
	p.topic = topicDim{index: -1, value: domain.NullValue()}
	if name == "" {
		return
	}
	p.topic.known = map[string]string{}
	col := domain.Column{Name: name, Type: domain.TypeString}
	if p.discover {
		p.neverDim(name)
		for i := range p.flat {
			if p.flat[i].name == name {
				p.flat[i].excluded = true
			}
		}
		p.dimCols = append(p.dimCols, col)
		p.dimVals = append(p.dimVals, field{}) // never set
		p.topic.index = len(p.dimCols) - 1
		p.minDims = len(p.dimCols)
	} else {
		// dimSrc stays one shorter than declared: dimensions reads the
		// message for the others only.
		p.declared = append(p.declared, col)
		p.topic.index = len(p.declared) - 1
	}
	if p.filter != nil && p.filter.Dimension == name {
		p.filterDim = p.topic.index
	}
}

// SetTopic sets the Kafka topic of the messages the following Parse calls
// see; rows carry it in the topic dimension. Call it whenever the topic
// may change (per fetched batch or per record): setting the topic already
// set costs a comparison (SetTopic inlines), switching back to one set
// before a map lookup. The parser keeps its own copy of topic. Without a
// topic dimension it does nothing. "" makes the dimension null.
func (p *Parser) SetTopic(topic string) {
	if p.topic.index >= 0 && topic != p.topic.name {
		p.switchTopic(topic)
	}
}

// switchTopic makes topic the current one, interned.
func (p *Parser) switchTopic(topic string) {
	t := &p.topic
	if topic == "" {
		t.name, t.value = "", domain.NullValue()
		return
	}
	s, ok := t.known[topic]
	if !ok {
		s = strings.Clone(topic)
		if len(t.known) < maxTopics {
			t.known[s] = s
		}
	}
	t.name, t.value = s, domain.StringValue(s)
}
