package domain

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Names that reach a file path, a SQL statement or a workflow id
// (supervisor ids, datasources) and Kafka topics are checked against a
// strict pattern first, so that no input can walk out of a directory, quote
// its way out of a string or smuggle a separator into a workflow id.
const (
	// MaxNameLen bounds a supervisor id or datasource name.
	MaxNameLen = 128
	// MaxTopicLen is Kafka's bound on a topic name.
	MaxTopicLen = 249

	nameRule  = "want 1-128 ASCII letters, digits, '.', '_' or '-', starting with a letter or digit, without \"..\""
	topicRule = "want 1-249 ASCII letters, digits, '.', '_' or '-' (Kafka's rule), other than \".\" and \"..\""
)

// ValidateName checks a supervisor id or datasource name: 1 to 128 ASCII
// letters, digits, '.', '_' and '-', starting with a letter or digit and
// never holding "..". The error is a *FieldError naming field, quoting
// (the start of) the value, saying what is wrong and what is allowed.
func ValidateName(field, value string) error {
	if msg := nameProblem(value); msg != "" {
		return &FieldError{Path: field, Msg: msg}
	}
	return nil
}

// ValidateTopic checks a Kafka topic name against Kafka's own rule: 1 to
// 249 ASCII letters, digits, '.', '_' and '-', and not "." or "..".
func ValidateTopic(field, value string) error {
	if msg := topicProblem(value); msg != "" {
		return &FieldError{Path: field, Msg: msg}
	}
	return nil
}

// nameProblem says what is wrong with a name, "" when nothing is.
func nameProblem(s string) string {
	switch {
	case s == "":
		return "empty: " + nameRule
	case len(s) > MaxNameLen:
		return fmt.Sprintf("%s is %d bytes long: %s", QuoteName(s), len(s), nameRule)
	case !isNameStart(s[0]):
		return fmt.Sprintf("%s starts with %s: %s", QuoteName(s), describeByte(s, 0), nameRule)
	case strings.Contains(s, ".."):
		return fmt.Sprintf("%s contains \"..\": %s", QuoteName(s), nameRule)
	}
	if i := badNameByte(s); i >= 0 {
		return fmt.Sprintf("%s has %s at byte %d: %s", QuoteName(s), describeByte(s, i), i, nameRule)
	}
	return ""
}

// topicProblem says what is wrong with a Kafka topic name, "" when
// nothing is.
func topicProblem(s string) string {
	switch {
	case s == "":
		return "empty: " + topicRule
	case len(s) > MaxTopicLen:
		return fmt.Sprintf("%s is %d bytes long: %s", QuoteName(s), len(s), topicRule)
	case s == "." || s == "..":
		return fmt.Sprintf("%q is not a topic name: %s", s, topicRule)
	}
	if i := badNameByte(s); i >= 0 {
		return fmt.Sprintf("%s has %s at byte %d: %s", QuoteName(s), describeByte(s, i), i, topicRule)
	}
	return ""
}

func isNameStart(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

func isNameByte(b byte) bool { return isNameStart(b) || b == '.' || b == '_' || b == '-' }

// badNameByte is the index of the first byte a name may not hold, or -1.
func badNameByte(s string) int {
	for i := 0; i < len(s); i++ {
		if !isNameByte(s[i]) {
			return i
		}
	}
	return -1
}

// describeByte names the character at byte i of s for an error message:
// '/', ' ', '\x00', 'é', or "the byte 0xff" when it is not UTF-8.
func describeByte(s string, i int) string {
	r, size := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && size <= 1 {
		return fmt.Sprintf("the byte 0x%02x (not UTF-8)", s[i])
	}
	return fmt.Sprintf("%q", r)
}

// QuoteName quotes a name (or anything a client sent) for an error
// message, cut to its first 40 bytes (on a character boundary) so that a
// 10 KB name makes a short error.
func QuoteName(s string) string {
	const limit = 40
	if len(s) <= limit {
		return fmt.Sprintf("%q", s)
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q...", s[:cut])
}
