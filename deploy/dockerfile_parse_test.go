package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A Dockerfile, parsed as far as these tests need: instructions grouped by
// stage, continuation lines joined, comments dropped.
type dockerfile struct {
	stages []stage
}

type stage struct {
	image, name string // FROM image [AS name]
	instrs      []instruction
}

type instruction struct {
	line int
	cmd  string // upper case: RUN, COPY, ...
	args string
}

func parseDockerfile(t *testing.T) dockerfile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var df dockerfile
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		start, text := i+1, strings.TrimSpace(lines[i])
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		for strings.HasSuffix(text, `\`) && i+1 < len(lines) {
			i++
			next := strings.TrimSpace(lines[i])
			if strings.HasPrefix(next, "#") {
				next = ""
			}
			text = strings.TrimSuffix(text, `\`) + " " + next
		}
		cmd, args, _ := strings.Cut(text, " ")
		in := instruction{line: start, cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)}
		if in.cmd == "FROM" {
			f := strings.Fields(in.args)
			st := stage{image: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				st.name = f[2]
			} else if len(f) != 1 {
				t.Fatalf("Dockerfile:%d: FROM %s: want IMAGE [AS NAME]", in.line, in.args)
			}
			df.stages = append(df.stages, st)
			continue
		}
		if len(df.stages) == 0 {
			t.Fatalf("Dockerfile:%d: %s before FROM", in.line, in.cmd)
		}
		last := &df.stages[len(df.stages)-1]
		last.instrs = append(last.instrs, in)
	}
	if len(df.stages) == 0 {
		t.Fatal("Dockerfile has no FROM")
	}
	return df
}

func (df dockerfile) final() stage { return df.stages[len(df.stages)-1] }

func (df dockerfile) stage(t *testing.T, name string) stage {
	t.Helper()
	for _, s := range df.stages {
		if s.name == name {
			return s
		}
	}
	t.Fatalf("Dockerfile has no stage %q", name)
	return stage{}
}

func (s stage) all(cmd string) []instruction {
	var out []instruction
	for _, in := range s.instrs {
		if in.cmd == cmd {
			out = append(out, in)
		}
	}
	return out
}

// env is the stage's ENV, in KEY=VALUE form (the only form used here).
func (s stage) env(t *testing.T) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, in := range s.all("ENV") {
		for _, kv := range shellWords(t, in.args) {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				t.Fatalf("Dockerfile:%d: ENV %s: want KEY=VALUE", in.line, kv)
			}
			env[k] = v
		}
	}
	return env
}

// execForm reads an exec-form (JSON array) instruction argument.
func execForm(t *testing.T, in instruction) []string {
	t.Helper()
	var argv []string
	if err := json.Unmarshal([]byte(in.args), &argv); err != nil || len(argv) == 0 {
		t.Fatalf("Dockerfile:%d: %s %s: want a JSON array (exec form)", in.line, in.cmd, in.args)
	}
	return argv
}

// copyArgs splits COPY's --flags from its sources and destination.
func copyArgs(t *testing.T, in instruction) (flags map[string]string, srcs []string, dst string) {
	t.Helper()
	flags = map[string]string{}
	words := shellWords(t, in.args)
	for len(words) > 0 && strings.HasPrefix(words[0], "--") {
		k, v, _ := strings.Cut(strings.TrimPrefix(words[0], "--"), "=")
		flags[k] = v
		words = words[1:]
	}
	if len(words) < 2 {
		t.Fatalf("Dockerfile:%d: COPY %s: want sources and a destination", in.line, in.args)
	}
	return flags, words[:len(words)-1], words[len(words)-1]
}

// shellWords splits a POSIX shell command line into words, honouring
// single and double quotes and backslash escapes; it refuses what it does
// not understand (expansions, operators), so a test cannot misread.
func shellWords(t *testing.T, s string) []string {
	t.Helper()
	words, err := splitWords(s)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return words
}

func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words, inWord = append(words, cur.String()), false
				cur.Reset()
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unclosed '")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i, inWord = i+1+j, true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '$' || s[i] == '`' {
					return nil, fmt.Errorf("expansion inside double quotes")
				}
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i == len(s) {
				return nil, fmt.Errorf(`unclosed "`)
			}
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case strings.IndexByte("$`;&|<>()", c) >= 0:
			return nil, fmt.Errorf("shell syntax %q not understood", c)
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

func TestSplitWords(t *testing.T) {
	good := map[string][]string{
		`CGO_ENABLED=0 go build -ldflags="-s -w" -o /out/`: {"CGO_ENABLED=0", "go", "build", "-ldflags=-s -w", "-o", "/out/"},
		`a 'b c' "d\"e" f\ g`:                              {"a", "b c", `d"e`, "f g"},
		"  x\ty  ":                                         {"x", "y"},
	}
	for in, want := range good {
		got, err := splitWords(in)
		if err != nil || strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("splitWords(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{`a && b`, `echo $HOME`, `"unclosed`, `'unclosed`, `"$x"`, "a; b"} {
		if _, err := splitWords(bad); err == nil {
			t.Errorf("splitWords(%q) accepted", bad)
		}
	}
}
