package storage

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func newStore(t *testing.T) *Local {
	t.Helper()
	s, err := NewLocal(filepath.Join(t.TempDir(), "deep"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func put(t *testing.T, s Store, key, content string) {
	t.Helper()
	err := s.Put(context.Background(), key, func(w io.Writer) error {
		_, err := io.WriteString(w, content)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, s Store, key string) string {
	t.Helper()
	rc, err := s.Open(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// walk lists every file under the store's root, temp files included.
func walk(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestNewLocalMakesRootAbsolute(t *testing.T) {
	t.Chdir(t.TempDir())
	s, err := NewLocal("rel/root")
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(s.Path("k")) {
		t.Fatalf("Path = %s, want absolute", s.Path("k"))
	}
	if st, err := os.Stat("rel/root"); err != nil || !st.IsDir() {
		t.Fatalf("root not created: %v", err)
	}
}

func TestPutOpenOverwrite(t *testing.T) {
	s := newStore(t)
	put(t, s, "ds/2024/seg.parquet", "one")
	if got := read(t, s, "ds/2024/seg.parquet"); got != "one" {
		t.Fatalf("read %q", got)
	}
	put(t, s, "ds/2024/seg.parquet", "two")
	if got := read(t, s, "ds/2024/seg.parquet"); got != "two" {
		t.Fatalf("read %q after overwrite", got)
	}
	st, err := os.Stat(s.Path("ds/2024/seg.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o644 {
		t.Fatalf("mode = %v", st.Mode())
	}
}

func TestPutCallbackErrorLeavesNothing(t *testing.T) {
	s := newStore(t)
	put(t, s, "ds/keep", "old")
	boom := errors.New("boom")
	for _, key := range []string{"ds/new", "ds/keep"} {
		err := s.Put(context.Background(), key, func(w io.Writer) error {
			if _, err := io.WriteString(w, strings.Repeat("partial", 100_000)); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) || !strings.Contains(err.Error(), key) {
			t.Fatalf("Put(%s) err = %v", key, err)
		}
	}
	if files := walk(t, s.Path("")); len(files) != 1 || files[0] != s.Path("ds/keep") {
		t.Fatalf("files after failed puts: %q", files)
	}
	if got := read(t, s, "ds/keep"); got != "old" {
		t.Fatalf("failed overwrite changed the file: %q", got[:min(len(got), 20)])
	}
}

func TestPutCanceledContext(t *testing.T) {
	s := newStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	err := s.Put(ctx, "k", func(w io.Writer) error {
		cancel()
		_, err := w.Write(make([]byte, 1<<20)) // larger than the buffer
		return err
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if files := walk(t, s.Path("")); len(files) != 0 {
		t.Fatalf("files left: %q", files)
	}
}

func TestOpenMissing(t *testing.T) {
	s := newStore(t)
	put(t, s, "dir/file", "x")
	for _, key := range []string{"nope", "dir/nope", "dir"} {
		_, err := s.Open(context.Background(), key)
		if !errors.Is(err, ErrNotFound) {
			t.Fatalf("Open(%s) err = %v, want ErrNotFound", key, err)
		}
	}
}

func TestDelete(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	put(t, s, "a/b", "x")
	if err := s.Delete(ctx, "a/b"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(ctx, "a/b"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Open after Delete err = %v", err)
	}
	if err := s.Delete(ctx, "a/b"); err != nil {
		t.Fatalf("second Delete: %v", err)
	}
	if err := s.Delete(ctx, "never/existed"); err != nil {
		t.Fatalf("Delete missing: %v", err)
	}
}

func TestList(t *testing.T) {
	s := newStore(t)
	keys := []string{"a/b/c/1", "a/b/c/2", "a/b/d", "a/bc/x", "a/z", "b", "ab/1"}
	for _, k := range keys {
		put(t, s, k, k)
	}
	// An in-flight Put's temp file must not show up.
	if err := os.WriteFile(s.Path("a/b/d"+tempMarker+"123"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := map[string][]string{
		"":        {"a/b/c/1", "a/b/c/2", "a/b/d", "a/bc/x", "a/z", "ab/1", "b"},
		"a/":      {"a/b/c/1", "a/b/c/2", "a/b/d", "a/bc/x", "a/z"},
		"a":       {"a/b/c/1", "a/b/c/2", "a/b/d", "a/bc/x", "a/z", "ab/1"},
		"a/b":     {"a/b/c/1", "a/b/c/2", "a/b/d", "a/bc/x"},
		"a/b/":    {"a/b/c/1", "a/b/c/2", "a/b/d"},
		"a/b/c/2": {"a/b/c/2"},
		"a/q/":    nil,
		"zzz/":    nil,
	}
	for prefix, want := range cases {
		got, err := s.List(context.Background(), prefix)
		if err != nil {
			t.Fatalf("List(%q): %v", prefix, err)
		}
		if len(got) != 0 || len(want) != 0 {
			if !reflect.DeepEqual(got, want) {
				t.Errorf("List(%q) = %q, want %q", prefix, got, want)
			}
		}
	}
}

func TestBadKeys(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	noop := func(io.Writer) error { return nil }
	for _, key := range []string{"", "/etc/passwd", "../x", "a/../../x", "a/..", "a//b", "./a", "a/", `a\b`, "a/b" + tempMarker + "1"} {
		if err := s.Put(ctx, key, noop); err == nil {
			t.Errorf("Put(%q) succeeded", key)
		}
		if _, err := s.Open(ctx, key); err == nil || errors.Is(err, ErrNotFound) {
			t.Errorf("Open(%q) err = %v, want a key error", key, err)
		}
		if err := s.Delete(ctx, key); err == nil {
			t.Errorf("Delete(%q) succeeded", key)
		}
	}
	for _, prefix := range []string{"/abs", "../", "a/../b"} {
		if _, err := s.List(ctx, prefix); err == nil {
			t.Errorf("List(%q) succeeded", prefix)
		}
	}
	if files := walk(t, filepath.Dir(s.Path(""))); len(files) != 0 {
		t.Fatalf("bad keys wrote files: %q", files)
	}
}

func TestURIAndPath(t *testing.T) {
	s := newStore(t)
	path := s.Path("ds/a b/seg.parquet")
	if want := filepath.Join(filepath.Dir(s.Path("x")), "ds", "a b", "seg.parquet"); path != want {
		t.Fatalf("Path = %s, want %s", path, want)
	}
	uri := s.URI("ds/a b/seg.parquet")
	if want := "file://" + strings.ReplaceAll(filepath.ToSlash(path), " ", "%20"); uri != want {
		t.Fatalf("URI = %s, want %s", uri, want)
	}
}

// A crashed writer's temp file is not a key, but DeleteDir removes it with
// the rest of its directory.
func TestLocalDeleteDirTakesUnfinishedWrites(t *testing.T) {
	l, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := l.Put(ctx, "sup/seq/a", func(w io.Writer) error { _, err := w.Write([]byte("x")); return err }); err != nil {
		t.Fatal(err)
	}
	orphan := l.Path("sup/seq/b" + tempMarker + "123")
	if err := os.WriteFile(orphan, []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := l.DeleteDir(ctx, "sup/seq/"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(l.Path("sup/seq")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("directory left: %v", err)
	}
}
