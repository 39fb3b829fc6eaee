package storage

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/minio/minio-go/v7"
)

func unfinishedKeys(t *testing.T, u Unfinished, prefix string) []string {
	t.Helper()
	objs, err := u.ListUnfinished(context.Background(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	return keysOf(objs)
}

// A worker SIGKILLed in the middle of a Put leaves its temporary file; it
// is listed as unfinished (never as a file), and deleted by its key.
func TestLocalUnfinished(t *testing.T) {
	s := newStore(t)
	put(t, s, "ds/a/seg.parquet", "whole")
	killed := "ds/a/other.parquet" + tempMarker + "123"
	if err := os.WriteFile(s.Path(killed), []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(s.Path("dt/b/x.tmp-1")), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.Path("dt/b/x.tmp-1"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := unfinishedKeys(t, s, "ds/"); !reflect.DeepEqual(got, []string{killed}) {
		t.Fatalf("unfinished %q, want %q", got, killed)
	}
	if keys, _ := s.List(context.Background(), "ds/"); !reflect.DeepEqual(keys, []string{"ds/a/seg.parquet"}) {
		t.Fatalf("list %q shows an unfinished write", keys)
	}
	if err := s.DeleteUnfinished(context.Background(), "ds/a/seg.parquet"); err == nil {
		t.Fatal("DeleteUnfinished removed a whole file")
	}
	for range 2 { // a second delete finds nothing and is no error
		if err := s.DeleteUnfinished(context.Background(), killed); err != nil {
			t.Fatal(err)
		}
	}
	if got := unfinishedKeys(t, s, "ds/"); len(got) != 0 {
		t.Fatalf("unfinished after the delete: %q", got)
	}
	if got := read(t, s, "ds/a/seg.parquet"); got != "whole" {
		t.Fatalf("the whole file reads %q", got)
	}
}

// A process that dies during a multipart upload leaves it incomplete; it
// is listed under the store's prefix and aborted by its key.
func TestS3Unfinished(t *testing.T) {
	f := newFakeS3(t)
	s := f.store(t, "p/")
	if got := unfinishedKeys(t, s, "ds/"); len(got) != 0 {
		t.Fatalf("unfinished in an empty bucket: %q", got)
	}
	ctx := context.Background()
	for _, name := range []string{"p/ds/a/seg.parquet", "p/dt/x.parquet", "q/ds/y.parquet"} {
		if _, err := f.core.NewMultipartUpload(ctx, fakeBucket, name, minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if got := unfinishedKeys(t, s, "ds/"); !reflect.DeepEqual(got, []string{"ds/a/seg.parquet"}) {
		t.Fatalf("unfinished %q, want [ds/a/seg.parquet]", got)
	}
	if err := s.DeleteUnfinished(ctx, "ds/a/seg.parquet"); err != nil {
		t.Fatal(err)
	}
	if got := unfinishedKeys(t, s, "ds/"); len(got) != 0 {
		t.Fatalf("unfinished after the delete: %q", got)
	}
	if got := len(f.uploads(t)); got != 2 {
		t.Fatalf("%d uploads left, want the 2 outside ds/", got)
	}
}
