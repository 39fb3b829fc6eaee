package parse

import (
	"fmt"
	"strings"
)

// UnparseableError says why a message cannot become rows. Nothing of the
// message was emitted.
type UnparseableError struct {
	// Field is the input field at fault, "" when the message as a whole is.
	Field string
	// Line is the CSV line (from 1) of the bad row, 0 for JSON.
	Line int
	// Msg says what is wrong and names the field and what was expected.
	Msg string
}

func (e *UnparseableError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

// Reasons a valid row is thrown away.
const (
	ReasonLate     = "late"     // before now - lateMessageRejectionPeriod
	ReasonEarly    = "early"    // after now + earlyMessageRejectionPeriod
	ReasonFiltered = "filtered" // the spec's filter does not match
)

// RejectedError says that a message parsed but is thrown away. Nothing of
// the message was emitted.
type RejectedError struct {
	Reason string // ReasonLate, ReasonEarly or ReasonFiltered
	Detail string
}

func (e *RejectedError) Error() string {
	return "row thrown away (" + e.Reason + "): " + e.Detail
}

func unparseable(field, format string, args ...any) *UnparseableError {
	return &UnparseableError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// short quotes s for an error message, cut so that a huge value does not
// make a huge error.
func short(s string) string {
	const limit = 64
	if len(s) <= limit {
		return fmt.Sprintf("%q", s)
	}
	cut := limit
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q...", s[:cut])
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// describe names a field's JSON kind, for "got ..." in error messages.
func describe(f field) string {
	switch f.kind {
	case kindString:
		return "the string " + short(f.content())
	case kindNumber:
		return "the number " + strings.Trim(short(f.text), `"`)
	case kindBool:
		return f.text
	case kindObject:
		return "an object"
	case kindArray:
		return "an array"
	case kindTime:
		return "the time " + short(f.text)
	}
	return "null"
}
