package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"handoff/internal/redact"
)

func newLogger(cfg Config) *slog.Logger { return buildLogger(cfg, os.Stderr) }

// buildLogger logs text or JSON at the configured level, with the
// passwords of any URL or DSN in a message or attribute masked: errors
// from Postgres, Kafka or the Temporal SDK (whose logger is routed through
// this one) may quote a connection string.
func buildLogger(cfg Config, w io.Writer) *slog.Logger {
	level, _ := cfg.level() // validated
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if cfg.LogFormat == "json" {
		h = slog.NewJSONHandler(w, opts)
	}
	return slog.New(redactHandler{h})
}

// logConfig logs the configuration, passwords masked, once at start.
func logConfig(cfg Config, log *slog.Logger) { log.Info("worker configured", "config", cfg) }

// redactHandler masks passwords before its handler formats a record.
type redactHandler struct{ h slog.Handler }

func (r redactHandler) Enabled(ctx context.Context, l slog.Level) bool { return r.h.Enabled(ctx, l) }

func (r redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, redact.URL(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(redactAttr(a))
		return true
	})
	return r.h.Handle(ctx, out)
}

func (r redactHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	redacted := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		redacted[i] = redactAttr(a)
	}
	return redactHandler{r.h.WithAttrs(redacted)}
}

func (r redactHandler) WithGroup(name string) slog.Handler { return redactHandler{r.h.WithGroup(name)} }

func redactAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, redact.URL(v.String()))
	case slog.KindGroup:
		group := v.Group()
		redacted := make([]slog.Attr, len(group))
		for i, g := range group {
			redacted[i] = redactAttr(g)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(redacted...)}
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.Any(a.Key, redact.Error(err))
		}
		// Structs, slices and the like: only rewritten when they print a
		// password, so JSON keeps their structure otherwise.
		s := fmt.Sprintf("%+v", v.Any())
		if r := redact.URL(s); r != s {
			return slog.String(a.Key, r)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
