package cli

import (
	"encoding/json"
	"fmt"
	"io"
)

// outputFormat is the value of --output; Set refuses anything but text and
// json, so a bad value is a usage error at flag parsing.
type outputFormat string

const (
	outputText outputFormat = "text"
	outputJSON outputFormat = "json"
)

func (o *outputFormat) String() string { return string(*o) }
func (o *outputFormat) Type() string   { return "text|json" }
func (o *outputFormat) Set(s string) error {
	switch outputFormat(s) {
	case outputText, outputJSON:
		*o = outputFormat(s)
		return nil
	}
	return fmt.Errorf("want text or json, got %q", s)
}

// textWriter is implemented by every command result: its text-mode
// rendering. In json mode the result is encoded as is.
type textWriter interface {
	writeText(w io.Writer) error
}

// printer writes command results to stdout, the one place data goes.
type printer struct {
	w      io.Writer
	format *outputFormat
}

func (p printer) print(result textWriter) error {
	if *p.format == outputJSON {
		enc := json.NewEncoder(p.w)
		enc.SetIndent("", "  ")
		return enc.Encode(result)
	}
	return result.writeText(p.w)
}
