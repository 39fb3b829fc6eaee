// Package storage is deep storage: the durable home of published segment
// files, addressed by "/"-separated keys. Local keeps them on disk; S3 keeps
// them in an S3-compatible bucket (AWS S3, MinIO). Open picks one from a
// URI: a path or file:// for Local, s3://bucket/prefix for S3.
package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// ErrNotFound is returned, wrapped, by Open for a missing key.
var ErrNotFound = errors.New("not found")

// Store is a flat namespace of immutable-looking files.
type Store interface {
	// Put atomically writes the file at key: a reader never sees a partial
	// file (Local writes a temp file and renames it; S3 completes an upload
	// only once the whole stream is stored). If write fails, the previous
	// file (or none) stays and nothing else is left behind.
	Put(ctx context.Context, key string, write func(w io.Writer) error) error
	// Open returns the file at key; errors.Is(err, ErrNotFound) when missing.
	Open(ctx context.Context, key string) (io.ReadCloser, error)
	// Delete removes the file at key; a missing key is not an error.
	// DeleteDir removes every file whose key starts with dir, which ends
	// with "/", unfinished writes a crashed writer left there included.
	// A Put into dir at the same time may fail or leave its file.
	DeleteDir(ctx context.Context, dir string) error
	Delete(ctx context.Context, key string) error
	// List returns the sorted keys that start with prefix (a plain string
	// prefix, as in S3: "a/b" matches "a/b/c" and "a/bc").
	List(ctx context.Context, prefix string) ([]string, error)
	// ListObjects is List with each file's size and last modification.
	ListObjects(ctx context.Context, prefix string) ([]Object, error)
	// URI names the file at key for humans and metadata, e.g. file:///abs/key.
	URI(key string) string
}

// Object is a listed file.
type Object struct {
	Key      string
	Size     int64
	Modified time.Time
}

// keysOf returns the objects' keys.
func keysOf(objs []Object) []string {
	keys := make([]string, len(objs))
	for i, o := range objs {
		keys[i] = o.Key
	}
	return keys
}

// tempMarker is part of every temp file name; keys may not use it, so List
// can skip in-flight writes.
const tempMarker = ".tmp-"

// checkKey refuses keys that could escape the root or be ambiguous.
func checkKey(key string) error {
	if key == "" {
		return errors.New("key is empty")
	}
	if strings.HasPrefix(key, "/") {
		return fmt.Errorf("key %q is absolute", key)
	}
	if strings.HasSuffix(key, "/") {
		return fmt.Errorf("key %q ends with /", key)
	}
	if err := checkElems(key); err != nil {
		return err
	}
	if base := key[strings.LastIndexByte(key, '/')+1:]; strings.Contains(base, tempMarker) {
		return fmt.Errorf("key %q: names containing %q are reserved for temp files", key, tempMarker)
	}
	return nil
}

// checkDir is checkPrefix for a whole directory: not empty (the root),
// and ending in "/".
func checkDir(dir string) error {
	if dir == "" || !strings.HasSuffix(dir, "/") {
		return fmt.Errorf("directory %q: want a key prefix ending in /", dir)
	}
	return checkPrefix(dir)
}

// checkPrefix is checkKey for List prefixes, which may be empty or end in /.
func checkPrefix(prefix string) error {
	if strings.HasPrefix(prefix, "/") {
		return fmt.Errorf("prefix %q is absolute", prefix)
	}
	return checkElems(strings.TrimSuffix(prefix, "/"))
}

func checkElems(key string) error {
	if key == "" {
		return nil
	}
	for elem := range strings.SplitSeq(key, "/") {
		switch elem {
		case "..":
			return fmt.Errorf("key %q contains ..", key)
		case "", ".":
			return fmt.Errorf("key %q has an empty or . element", key)
		}
		if strings.ContainsRune(elem, '\\') || strings.ContainsRune(elem, 0) {
			return fmt.Errorf("key %q contains a backslash or NUL", key)
		}
	}
	return nil
}

// KeyOf is the key under which s holds the object at uri (the inverse of
// s.URI), or an error when uri is not in s.
func KeyOf(s Store, uri string) (string, error) {
	base := strings.TrimSuffix(s.URI("x"), "x")
	key, ok := strings.CutPrefix(uri, base)
	if !ok || key == "" {
		return "", fmt.Errorf("%s is not in storage %s", uri, base)
	}
	return key, nil
}
