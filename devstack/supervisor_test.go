package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"handoff/internal/domain"
)

// The starter the stack runs is told where the dev server's UI is (the
// starter cannot guess it), and the banner links to the same place.
func TestStarterAndBannerKnowTheUI(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	l := layout{root: root}
	if err := os.MkdirAll(l.dev("bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A starter that prints what it was given.
	script := "#!/bin/sh\necho \"args=$*\"\necho \"address=$TEMPORAL_ADDRESS namespace=$TEMPORAL_NAMESPACE ui=$TEMPORAL_UI_URL\"\n"
	if err := os.WriteFile(l.dev("bin", "starter"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	s := &stack{l: l, out: &out, errw: &out, cfg: config{spec: "examples/wiki.json"},
		spec:     domain.Spec{ID: "wiki", IOConfig: domain.IOConfig{Topic: "wiki"}},
		temporal: &proc{logPath: l.dev("temporal.log")}, worker: &proc{logPath: l.dev("worker.log")}, catalog: &proc{logPath: l.dev("catalog.log")}}
	got, err := s.starter(t.Context(), "start", "-f", "examples/wiki.json")
	if err != nil {
		t.Fatalf("starter: %v\n%s", err, got)
	}
	want := "address=127.0.0.1:7233 namespace=default ui=http://localhost:8233\n"
	if !strings.Contains(got, want) {
		t.Errorf("the starter ran with\n%s\nwant %q", got, want)
	}

	s.printBanner()
	if link := temporalUIURL + "/namespaces/default/workflows/supervisor%2Fwiki"; !strings.Contains(out.String(), link) {
		t.Errorf("banner has no %s:\n%s", link, out.String())
	}
	// The Iceberg REST catalog: its URL, and a curl that works as printed.
	for _, want := range []string{"Iceberg REST", "http://localhost:8181  (prefix handoff; bearer token in .dev/catalog-token", `curl -H "Authorization: Bearer $(cat .dev/catalog-token)" http://localhost:8181/v1/handoff/namespaces/handoff/tables/`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("banner has no %q:\n%s", want, out.String())
		}
	}
}
