package storage

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Every Store runs this contract: Local on a temp dir, S3 on an in-process
// S3 server (s3_test.go).
func TestLocalContract(t *testing.T) {
	testStoreContract(t, func(t *testing.T) Store { return newStore(t) })
}

// bigSize spans several parts of the smallest S3 part size, so S3 stores
// take the multipart path; Local just writes a larger file.
const bigSize = 2*minS3PartSize + minS3PartSize/2

// testStoreContract checks the behaviour of the Store interface against
// stores that newStore makes, each fresh and empty.
func testStoreContract(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := context.Background()

	t.Run("PutOpenOverwrite", func(t *testing.T) {
		s := newStore(t)
		put(t, s, "ds/2024/seg.parquet", "one")
		if got := read(t, s, "ds/2024/seg.parquet"); got != "one" {
			t.Fatalf("read %q", got)
		}
		put(t, s, "ds/2024/seg.parquet", "two")
		if got := read(t, s, "ds/2024/seg.parquet"); got != "two" {
			t.Fatalf("read %q after overwrite", got)
		}
		put(t, s, "ds/empty", "")
		if got := read(t, s, "ds/empty"); got != "" {
			t.Fatalf("empty object read back as %d bytes", len(got))
		}
	})

	t.Run("SegmentFiles", func(t *testing.T) {
		s := newStore(t)
		files := map[string][]byte{
			"wiki/20240101T000000Z_20240101T010000Z/wiki_g0_s1.parquet":   randomBytes(1, 300<<10),
			"wiki/20240101T010000Z_20240101T020000Z/wiki_g0_s1.parquet":   randomBytes(2, bigSize),
			"wiki/20240101T010000Z_20240101T020000Z/wiki_g1_s1.parquet":   randomBytes(3, minS3PartSize), // exactly one part
			"other/20240101T000000Z_20240101T010000Z/other_g0_s1.parquet": randomBytes(4, 10),
		}
		for key, b := range files {
			putBytes(t, s, key, b)
		}
		for key, want := range files {
			if got := readBytes(t, s, key); !bytes.Equal(got, want) {
				t.Fatalf("%s: read %d bytes, not the %d written", key, len(got), len(want))
			}
		}
		want := []string{
			"wiki/20240101T000000Z_20240101T010000Z/wiki_g0_s1.parquet",
			"wiki/20240101T010000Z_20240101T020000Z/wiki_g0_s1.parquet",
			"wiki/20240101T010000Z_20240101T020000Z/wiki_g1_s1.parquet",
		}
		assertList(t, s, "wiki/", want)
		if err := s.Delete(ctx, want[1]); err != nil {
			t.Fatal(err)
		}
		assertList(t, s, "wiki/", []string{want[0], want[2]})
		if _, err := s.Open(ctx, want[1]); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Open after Delete err = %v", err)
		}
	})

	t.Run("FailedWriteLeavesNothing", func(t *testing.T) {
		for _, size := range []int{10, 100_000, bigSize} {
			s := newStore(t)
			put(t, s, "ds/keep", "old")
			boom := errors.New("boom")
			for _, key := range []string{"ds/new", "ds/keep"} {
				err := s.Put(ctx, key, func(w io.Writer) error {
					if _, err := w.Write(randomBytes(5, size)); err != nil {
						return err
					}
					return boom
				})
				if !errors.Is(err, boom) || !strings.Contains(err.Error(), key) {
					t.Fatalf("size %d: Put(%s) err = %v", size, key, err)
				}
			}
			assertList(t, s, "", []string{"ds/keep"})
			if _, err := s.Open(ctx, "ds/new"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("size %d: Open of the failed key err = %v", size, err)
			}
			if got := read(t, s, "ds/keep"); got != "old" {
				t.Fatalf("size %d: failed overwrite changed the file: %d bytes", size, len(got))
			}
		}
	})

	t.Run("CanceledContext", func(t *testing.T) {
		s := newStore(t)
		cctx, cancel := context.WithCancel(ctx)
		err := s.Put(cctx, "k", func(w io.Writer) error {
			cancel()
			_, err := w.Write(make([]byte, 1<<20))
			return err
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		cancel()
		if err := s.Put(cctx, "k2", func(io.Writer) error { return nil }); !errors.Is(err, context.Canceled) {
			t.Fatalf("Put with a done context err = %v", err)
		}
		assertList(t, s, "", nil)
	})

	t.Run("CanceledMidStreamIgnoredByWriter", func(t *testing.T) {
		// The writer swallows the failed Write and returns nil: the stream
		// is not whole, so nothing may appear.
		s := newStore(t)
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		err := s.Put(cctx, "k", func(w io.Writer) error {
			_, _ = w.Write(randomBytes(6, bigSize))
			cancel()
			_, _ = w.Write(randomBytes(7, bigSize))
			return nil
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		assertList(t, s, "", nil)
	})

	t.Run("RetryAfterFailureWritesWholeObject", func(t *testing.T) {
		s := newStore(t)
		first := errors.New("first attempt dies")
		err := s.Put(ctx, "ds/seg", func(w io.Writer) error {
			if _, err := w.Write(randomBytes(8, bigSize)); err != nil {
				return err
			}
			return first
		})
		if !errors.Is(err, first) {
			t.Fatalf("first Put err = %v", err)
		}
		want := randomBytes(9, bigSize+123)
		putBytes(t, s, "ds/seg", want)
		if got := readBytes(t, s, "ds/seg"); !bytes.Equal(got, want) {
			t.Fatalf("read %d bytes after the retry, want the %d written", len(got), len(want))
		}
		assertList(t, s, "", []string{"ds/seg"})
	})

	t.Run("OpenMissing", func(t *testing.T) {
		s := newStore(t)
		put(t, s, "dir/file", "x")
		for _, key := range []string{"nope", "dir/nope", "dir"} {
			if _, err := s.Open(ctx, key); !errors.Is(err, ErrNotFound) {
				t.Fatalf("Open(%s) err = %v, want ErrNotFound", key, err)
			}
		}
	})

	t.Run("Delete", func(t *testing.T) {
		s := newStore(t)
		put(t, s, "a/b", "x")
		put(t, s, "a/c", "y")
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
		assertList(t, s, "", []string{"a/c"})
	})

	t.Run("DeleteDir", func(t *testing.T) {
		s := newStore(t)
		for _, k := range []string{"sup/seq1/a", "sup/seq1/b", "sup/seq1/deep/c", "sup/seq10/x", "sup/seq2/y"} {
			put(t, s, k, k)
		}
		if err := s.DeleteDir(ctx, "sup/seq1/"); err != nil {
			t.Fatal(err)
		}
		assertList(t, s, "", []string{"sup/seq10/x", "sup/seq2/y"})
		if err := s.DeleteDir(ctx, "sup/seq1/"); err != nil {
			t.Fatalf("DeleteDir of a missing directory: %v", err)
		}
		for _, dir := range []string{"", "/", "sup/seq2", "../", "a/../../"} {
			if err := s.DeleteDir(ctx, dir); err == nil {
				t.Fatalf("DeleteDir(%q) took a prefix that is not a directory", dir)
			}
		}
		assertList(t, s, "", []string{"sup/seq10/x", "sup/seq2/y"})
	})

	t.Run("List", func(t *testing.T) {
		s := newStore(t)
		for _, k := range []string{"a/b/c/1", "a/b/c/2", "a/b/d", "a/bc/x", "a/z", "b", "ab/1"} {
			put(t, s, k, k)
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
			assertList(t, s, prefix, want)
		}
	})

	t.Run("BadKeys", func(t *testing.T) {
		s := newStore(t)
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
		assertList(t, s, "", nil)
	})
}

func putBytes(t *testing.T, s Store, key string, b []byte) {
	t.Helper()
	err := s.Put(context.Background(), key, func(w io.Writer) error {
		// Several writes of odd sizes, as an encoder makes them.
		for rest := b; len(rest) > 0; {
			n := min(len(rest), 70_001)
			if _, err := w.Write(rest[:n]); err != nil {
				return err
			}
			rest = rest[n:]
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func readBytes(t *testing.T, s Store, key string) []byte {
	t.Helper()
	return []byte(read(t, s, key))
}

func assertList(t *testing.T, s Store, prefix string, want []string) {
	t.Helper()
	got, err := s.List(context.Background(), prefix)
	if err != nil {
		t.Fatalf("List(%q): %v", prefix, err)
	}
	if (len(got) != 0 || len(want) != 0) && !reflect.DeepEqual(got, want) {
		t.Fatalf("List(%q) = %q, want %q", prefix, got, want)
	}
	// ListObjects lists the same files, each with its size and a recent
	// modification time.
	objs, err := s.ListObjects(context.Background(), prefix)
	if err != nil {
		t.Fatalf("ListObjects(%q): %v", prefix, err)
	}
	if len(objs) != len(got) {
		t.Fatalf("ListObjects(%q) listed %d files, List %d", prefix, len(objs), len(got))
	}
	for i, o := range objs {
		if o.Key != got[i] {
			t.Fatalf("ListObjects(%q)[%d] = %q, List has %q", prefix, i, o.Key, got[i])
		}
		r, err := s.Open(context.Background(), o.Key)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, r)
		r.Close()
		if o.Size != n {
			t.Fatalf("ListObjects(%q): %s has size %d, its content %d bytes", prefix, o.Key, o.Size, n)
		}
		if age := time.Since(o.Modified); age < -time.Minute || age > time.Hour {
			t.Fatalf("ListObjects(%q): %s modified %s, not recently", prefix, o.Key, o.Modified)
		}
	}
}

// randomBytes are n bytes that differ per seed and do not compress.
func randomBytes(seed byte, n int) []byte {
	b := make([]byte, n)
	_, _ = rand.NewChaCha8([32]byte{seed}).Read(b) // never fails
	return b
}
