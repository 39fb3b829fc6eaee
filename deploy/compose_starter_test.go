package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/types"

	startercli "handoff/starter/cli"
)

func TestComposeStarters(t *testing.T) {
	p := loadCompose(t)
	root := repoRoot(t)
	reads := starterEnv(t)
	worker := env(svc(t, p, "worker"))
	kafkaTopic := topicCreated(t, p)
	b := findGoBuild(t, parseDockerfile(t))
	for _, name := range starterServices {
		s := svc(t, p, name)
		if len(s.Entrypoint) != 1 || s.Entrypoint[0] != "/usr/local/bin/starter" || !slices.Contains(b.binaries(), "starter") {
			t.Errorf("%s: entrypoint %q, want the image's /usr/local/bin/starter", name, s.Entrypoint)
		}
		for k, v := range env(s) {
			if !reads[k] {
				t.Errorf("%s: environment %s: the starter does not read it (it reads %q)", name, k, sortedKeys(reads))
			}
			if wv, ok := worker[k]; ok && wv != v {
				t.Errorf("%s: %s=%s, the worker has %s", name, k, v, wv)
			}
		}
		// The real CLI accepts the command line: flags are parsed before
		// --help is honoured, and help does nothing else.
		var stdout, stderr bytes.Buffer
		code := startercli.Run(context.Background(), append(slices.Clone(s.Command), "--help"),
			startercli.IO{Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }})
		if code != startercli.ExitOK || !strings.Contains(stdout.String(), "Usage:") {
			t.Errorf("%s: starter %q: exit %d\n%s", name, s.Command, code, stderr.String())
		}
		if i := slices.Index(s.Command, "--topic"); i >= 0 && s.Command[i+1] != kafkaTopic {
			t.Errorf("%s: produces to %s, kafka-topics creates %s", name, s.Command[i+1], kafkaTopic)
		}
	}

	// The example's spec: in the image (the Dockerfile copies examples/ to
	// /examples), valid, and reading the topic kafka-topics creates.
	cmd := svc(t, p, "example-supervisor").Command
	i := slices.Index(cmd, "-f")
	if len(cmd) < 2 || cmd[0] != "start" || i < 0 || i+1 >= len(cmd) || !slices.Contains(cmd, "--wait") {
		t.Fatalf("example-supervisor runs %q: want start -f SPEC --wait", cmd)
	}
	rel, ok := strings.CutPrefix(cmd[i+1], "/examples/")
	if !ok {
		t.Fatalf("spec %s is not under /examples", cmd[i+1])
	}
	spec := filepath.Join(root, "examples", rel)
	var stdout, stderr bytes.Buffer
	if code := startercli.Run(context.Background(), []string{"validate", "-f", spec}, startercli.IO{Stdout: &stdout, Stderr: &stderr}); code != startercli.ExitOK {
		t.Fatalf("starter validate -f %s: exit %d\n%s%s", spec, code, stdout.String(), stderr.String())
	}
	raw, err := os.ReadFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	var parsed struct {
		IOConfig struct {
			Topic string `json:"topic"`
		} `json:"ioConfig"`
	}
	if err := json.Unmarshal(raw, &parsed); err != nil || parsed.IOConfig.Topic != kafkaTopic {
		t.Errorf("%s reads topic %q (%v), kafka-topics creates %q", spec, parsed.IOConfig.Topic, err, kafkaTopic)
	}
}

// topicCreated is the topic the kafka-topics one-shot creates.
func topicCreated(t *testing.T, p *types.Project) string {
	t.Helper()
	cmd := svc(t, p, "kafka-topics").Command
	i := slices.Index(cmd, "--topic")
	if i < 0 || i+1 >= len(cmd) || !slices.Contains(cmd, "--create") {
		t.Fatalf("kafka-topics runs %q: want --create --topic T", cmd)
	}
	if !slices.Contains(cmd, "--bootstrap-server") || !slices.Contains(advertised(env(svc(t, p, "kafka"))), cmd[slices.Index(cmd, "--bootstrap-server")+1]) {
		t.Errorf("kafka-topics runs %q: not against an advertised listener", cmd)
	}
	return cmd[i+1]
}
