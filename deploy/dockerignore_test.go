package deploy

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// dockerignore holds the patterns of .dockerignore. It understands the
// subset the file uses: plain paths, * and ? within a path element, and a
// leading **/ (any depth); anything else fails the test rather than being
// misread.
type dockerignore []string

func readDockerignore(t *testing.T) dockerignore {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	var d dockerignore
	for l := range strings.Lines(string(b)) {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		p := path.Clean(strings.TrimPrefix(l, "/"))
		if strings.HasPrefix(l, "!") || strings.Contains(strings.TrimPrefix(p, "**/"), "**") {
			t.Fatalf(".dockerignore: pattern %q is beyond what this test understands", l)
		}
		d = append(d, p)
	}
	return d
}

// ignores reports whether the build context leaves out rel (slash-
// separated, relative to the repository root): a pattern matches the path
// or one of its parent directories.
func (d dockerignore) ignores(rel string) bool {
	elems := strings.Split(rel, "/")
	for _, p := range d {
		anyDepth := strings.HasPrefix(p, "**/")
		p = strings.TrimPrefix(p, "**/")
		n := strings.Count(p, "/") + 1
		for start := 0; start+n <= len(elems) && (start == 0 || anyDepth); start++ {
			if ok, _ := path.Match(p, strings.Join(elems[start:start+n], "/")); ok {
				return true
			}
		}
	}
	return false
}

func TestDockerignoreMatching(t *testing.T) {
	d := dockerignore{".git", "bench", "**/node_modules", "**/*.test", "docs/*.png"}
	for _, in := range []string{".git/HEAD", "bench/x.go", "uitest/node_modules/a/b.js", "node_modules/x", "worker/worker.test", "x.test", "docs/a.png"} {
		if !d.ignores(in) {
			t.Errorf("%s not ignored", in)
		}
	}
	for _, out := range []string{"go.mod", "worker/main.go", "internal/bench/x.go", "docs/img/a.png", "a/.git"} {
		if d.ignores(out) {
			t.Errorf("%s ignored", out)
		}
	}
}

// TestDockerignoreKeepsTheBuild checks that every file the image build
// reads is in the context: go.mod, go.sum, the sources and embedded files
// of every package of this module that the built commands import, and what
// the runtime stage copies; and that the repository's .git stays out.
func TestDockerignoreKeepsTheBuild(t *testing.T) {
	d := readDockerignore(t)
	root := repoRoot(t)
	b := findGoBuild(t, parseDockerfile(t))
	needed := []string{"go.mod", "go.sum"}

	cmd := exec.Command("go", append([]string{"list", "-deps", "-json"}, b.packages...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var pkg struct {
			Dir                                     string
			Module                                  *struct{ Main bool }
			GoFiles, EmbedFiles, OtherFiles, SFiles []string
		}
		if err := dec.Decode(&pkg); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if pkg.Module == nil || !pkg.Module.Main {
			continue
		}
		rel, err := filepath.Rel(root, pkg.Dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, files := range [][]string{pkg.GoFiles, pkg.EmbedFiles, pkg.OtherFiles, pkg.SFiles} {
			for _, f := range files {
				needed = append(needed, filepath.ToSlash(filepath.Join(rel, f)))
			}
		}
	}
	for _, in := range parseDockerfile(t).final().all("COPY") {
		if flags, srcs, _ := copyArgs(t, in); flags["from"] == "" {
			for _, src := range srcs {
				err := filepath.WalkDir(filepath.Join(root, src), func(p string, e os.DirEntry, err error) error {
					if err == nil && !e.IsDir() {
						rel, _ := filepath.Rel(root, p)
						needed = append(needed, filepath.ToSlash(rel))
					}
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if len(needed) < 50 {
		t.Fatalf("only %d files found to be needed: the listing is broken", len(needed))
	}
	for _, f := range needed {
		if d.ignores(f) {
			t.Errorf(".dockerignore leaves out %s, which the build needs", f)
		}
	}
	for _, f := range []string{".git/HEAD", ".tools/bin/temporal", ".dev/pg/PG_VERSION", "uitest/node_modules/x/index.js"} {
		if !d.ignores(f) {
			t.Errorf(".dockerignore sends %s to the Docker daemon", f)
		}
	}
}
