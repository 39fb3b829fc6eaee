package domain_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"handoff/internal/domain"
)

// FuzzParseSpec feeds any bytes to ParseSpec. Whatever the input: no
// panic; an error names what is wrong (a *FieldError with its path, or a
// message about the spec as a whole); and a spec it accepts validates,
// and its JSON parses back to a spec whose JSON is the same, so a spec
// survives being recorded and read again. Seeds are in
// testdata/fuzz/FuzzParseSpec/ besides the ones added here.
func FuzzParseSpec(f *testing.F) {
	for _, seed := range []string{minimalSpec, fullSpec, `{}`, `[]`, `null`, ``} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := domain.ParseSpec(data)
		if err != nil {
			checkSpecError(t, data, err)
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("ParseSpec(%q) accepted a spec that does not validate: %v", data, err)
		}
		out, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("ParseSpec(%q) accepted a spec that does not marshal: %v", data, err)
		}
		again, err := domain.ParseSpec(out)
		if err != nil {
			t.Fatalf("ParseSpec(%q) accepted a spec whose JSON %s it refuses: %v", data, out, err)
		}
		out2, err := json.Marshal(again)
		if err != nil {
			t.Fatalf("re-parsed spec does not marshal: %v", err)
		}
		if !bytes.Equal(out, out2) {
			t.Fatalf("ParseSpec(%q): JSON is not stable:\n%s\nthen\n%s", data, out, out2)
		}
	})
}

// checkSpecError checks that a ParseSpec error says what and where.
func checkSpecError(t *testing.T, data []byte, err error) {
	t.Helper()
	msg := err.Error()
	var fe *domain.FieldError
	switch {
	case errors.As(err, &fe):
		if fe.Path == "" || fe.Msg == "" {
			t.Fatalf("ParseSpec(%q): FieldError %q without a path or a message", data, msg)
		}
	case !strings.HasPrefix(msg, "spec "):
		t.Fatalf("ParseSpec(%q): error %q names neither a field nor the spec", data, msg)
	}
	// Errors quote values cut short: a huge spec never makes a huge error.
	if len(msg) > 2048 {
		t.Fatalf("ParseSpec(%d bytes): error of %d bytes: %.200q...", len(data), len(msg), msg)
	}
}

// Regression (found by FuzzParseSpec's seeds): an empty spec failed with
// "spec: EOF", and a spec that is a JSON array or string with a
// *FieldError of no path (": want an object, got JSON array").
func TestParseSpecNamesWhatIsWrongWithTheWholeSpec(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                      "spec is empty: want one JSON object",
		" \n\t":                 "spec is empty: want one JSON object",
		"[]":                    "spec is not a JSON object: got JSON array",
		`"wiki"`:                "spec is not a JSON object: got JSON string",
		"7":                     "spec is not a JSON object: got JSON number",
		"[" + minimalSpec + "]": "spec is not a JSON object: got JSON array",
	} {
		_, err := domain.ParseSpec([]byte(in))
		if err == nil || err.Error() != want {
			t.Errorf("ParseSpec(%.20q) = %v, want %q", in, err, want)
		}
	}
}
