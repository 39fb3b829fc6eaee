package storage

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpenLocal(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	ctx := context.Background()
	cases := map[string]string{
		"data/deep":                                  filepath.Join(dir, "data", "deep"),
		filepath.Join(dir, "abs"):                    filepath.Join(dir, "abs"),
		"file://" + filepath.Join(dir, "f"):          filepath.Join(dir, "f"),
		"file://localhost" + filepath.Join(dir, "g"): filepath.Join(dir, "g"),
		"file://" + filepath.Join(dir, "a%20b"):      filepath.Join(dir, "a b"),
	}
	for uri, root := range cases {
		s, err := Open(ctx, uri)
		if err != nil {
			t.Fatalf("Open(%s): %v", uri, err)
		}
		l, ok := s.(*Local)
		if !ok {
			t.Fatalf("Open(%s) = %T, want *Local", uri, s)
		}
		if got := l.Path("k"); got != filepath.Join(root, "k") {
			t.Errorf("Open(%s): key k at %s, want under %s", uri, got, root)
		}
	}
}

func TestOpenS3(t *testing.T) {
	f := newFakeS3(t)
	ctx := context.Background()
	s, err := Open(ctx, "s3://segments/deep/root", WithS3(f.config()))
	if err != nil {
		t.Fatal(err)
	}
	s3, ok := s.(*S3)
	if !ok {
		t.Fatalf("Open = %T, want *S3", s)
	}
	put(t, s3, "ds/seg", "x")
	if got := s3.URI("ds/seg"); got != "s3://segments/deep/root/ds/seg" {
		t.Fatalf("URI = %s", got)
	}
	if objs := f.objects(t); len(objs) != 1 || objs[0] != "deep/root/ds/seg" {
		t.Fatalf("objects %q", objs)
	}
	if s, err := Open(ctx, "s3://segments", WithS3(f.config())); err != nil || s.(*S3).URI("k") != "s3://segments/k" {
		t.Fatalf("bucket without prefix: %v", err)
	}
}

func TestOpenRefuses(t *testing.T) {
	f := newFakeS3(t)
	cases := map[string]string{
		"":                           "empty",
		"gs://bucket/x":              "not supported",
		"http://host/x":              "not supported",
		"file://otherhost/x":         "local path",
		"file://":                    "no path",
		"s3://Bad_Bucket/x":          "bucket",
		"s3://missing-bucket/x":      "does not exist",
		"s3://key:secret@segments/x": "credentials",
		"s3://segments/x?region=eu":  "query",
		"s3://segments/a//b":         "empty",
	}
	for uri, want := range cases {
		if _, err := Open(context.Background(), uri, WithS3(f.config())); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Open(%q) err = %v, want one mentioning %q", uri, err, want)
		}
	}
}
