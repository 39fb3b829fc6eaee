package parse

import (
	"strings"

	"handoff/internal/domain"
)

// The topic dimension (ioConfig.topicDimension) is a string dimension
// whose value is the Kafka topic of the message, as Kafka Connect's topic
// field is, set by the caller with SetTopic rather than read from the
// message. With declared dimensions it is the last one (a filter may name
// it); with schemaless discovery it is the first, present before any
// message, and a message or flattened field of the same name is never a
// dimension: the topic wins. Before the first SetTopic it is null.

// topicDim is the parser's topic dimension.
type topicDim struct {
	index int          // in the declared dimensions or the discovered ones; -1: none
	name  string       // the topic last set
	value domain.Value // its cell
}

// declareTopicDim adds the topic dimension after the declared ones.
func (p *Parser) declareTopicDim(name string) {
	p.topic = topicDim{index: -1, value: domain.NullValue()}
	if name == "" || p.discover {
		return
	}
	p.declared = append(p.declared, domain.Column{Name: name, Type: domain.TypeString})
	p.topic.index = len(p.declared) - 1
}

// discoverTopicDim makes the topic dimension the first discovered one,
// once wire has marked what discovery leaves out.
func (p *Parser) discoverTopicDim(name string) {
	if name == "" || !p.discover {
		return
	}
	p.neverDim(name)
	for i := range p.flat {
		if p.flat[i].name == name {
			p.flat[i].excluded = true
		}
	}
	p.dimCols = append(p.dimCols, domain.Column{Name: name, Type: domain.TypeString})
	p.dimVals = append(p.dimVals, field{})
	p.topic.index = len(p.dimCols) - 1
	p.minDims = len(p.dimCols)
}

// SetTopic is the topic of the messages the following Parse calls see.
// Without a topic dimension it does nothing; setting the same topic again
// costs a comparison.
func (p *Parser) SetTopic(topic string) {
	if p.topic.index < 0 || (topic == p.topic.name && !p.topic.value.Null) {
		return
	}
	p.topic.name = strings.Clone(topic)
	p.topic.value = domain.StringValue(p.topic.name)
}

// setTopicDim writes the topic into a finished row's dimensions.
func (p *Parser) setTopicDim(dims []domain.Value) {
	if i := p.topic.index; i >= 0 && i < len(dims) {
		dims[i] = p.topic.value
	}
}
