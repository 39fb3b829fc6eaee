package domain

import (
	"fmt"
	"regexp"
	"slices"
)

// A supervisor reads one topic (ioConfig.topic) or every topic whose whole
// name matches ioConfig.topicPattern. With a pattern, partitions carry
// their topic (Partition.Topic), topics that start matching join at the
// next period, and internal topics (the brokers' own, such as
// __consumer_offsets) never match.

// MultiTopic reports whether the supervisor reads by topicPattern.
func (c IOConfig) MultiTopic() bool { return c.TopicPattern != "" }

// Source is what the supervisor reads, for logs and status: the topic, or
// the pattern between slashes.
func (c IOConfig) Source() string {
	if c.MultiTopic() {
		return "/" + c.TopicPattern + "/"
	}
	return c.Topic
}

// CompileTopicPattern compiles a topicPattern so that it must match a
// topic's whole name, as Java's Matcher.matches does in Druid.
func CompileTopicPattern(pattern string) (*regexp.Regexp, error) {
	return regexp.Compile(`^(?:` + pattern + `)$`)
}

// Matches reports whether the supervisor reads topic.
func (c IOConfig) Matches(topic string) bool {
	if !c.MultiTopic() {
		return topic == c.Topic
	}
	re, err := CompileTopicPattern(c.TopicPattern)
	return err == nil && re.MatchString(topic)
}

// MatchingTopics is the topics of names the supervisor reads, in order.
func (c IOConfig) MatchingTopics(names []string) []string {
	match := func(n string) bool { return n == c.Topic }
	if c.MultiTopic() {
		re, err := CompileTopicPattern(c.TopicPattern)
		if err != nil {
			return nil
		}
		match = re.MatchString
	}
	var out []string
	for _, n := range names {
		if match(n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (c IOConfig) validateTopics() error {
	if !c.MultiTopic() {
		return nil
	}
	if _, err := CompileTopicPattern(c.TopicPattern); err != nil {
		return &FieldError{Path: "ioConfig.topicPattern", Msg: fmt.Sprintf("not a regular expression (Go RE2 syntax): %v", err)}
	}
	if c.DeadLetterTopic != "" && c.Matches(c.DeadLetterTopic) {
		return &FieldError{Path: "ioConfig.deadLetterTopic", Msg: fmt.Sprintf("%q matches ioConfig.topicPattern: the supervisor would read its own rejects", c.DeadLetterTopic)}
	}
	return nil
}

// validateTopicDimension checks that the topic's dimension has a name no
// other column has.
func validateTopicDimension(ds DataSchema, name string) error {
	const path = "ioConfig.topicDimension"
	if name == "" {
		return nil
	}
	switch {
	case name == ds.TimestampSpec.Column || reservedName(name):
		return &FieldError{Path: path, Msg: fmt.Sprintf("%q is reserved (the timestamp column or a name starting with __)", name)}
	case slices.ContainsFunc(ds.DimensionsSpec.Dimensions, func(d DimensionSpec) bool { return d.Name == name }):
		return &FieldError{Path: path, Msg: fmt.Sprintf("%q is already a declared dimension: the topic dimension is added to them, leave it out of dimensionsSpec", name)}
	case slices.ContainsFunc(ds.MetricsSpec, func(m MetricSpec) bool { return m.Name == name }):
		return &FieldError{Path: path, Msg: fmt.Sprintf("%q is already the name of a metric", name)}
	}
	return nil
}
