package lake

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	iceio "github.com/apache/iceberg-go/io"

	"handoff/internal/storage"
)

// storeIO lets iceberg-go read and write table files through deep
// storage, whatever its kind (file:// or s3://), addressing them by the
// URIs deep storage names them with. Metadata files are small: a read
// loads the whole object, a write buffers it and puts it whole.
type storeIO struct {
	ctx   context.Context
	store storage.Store
	base  string // URI of the empty key, with its trailing "/"
}

var (
	_ iceio.IO          = (*storeIO)(nil)
	_ iceio.WriteFileIO = (*storeIO)(nil)
)

func newStoreIO(ctx context.Context, store storage.Store) *storeIO {
	return &storeIO{ctx: ctx, store: store, base: baseURI(store)}
}

// baseURI is the URI prefix deep storage puts before every key.
func baseURI(store storage.Store) string {
	const probe = "x"
	return strings.TrimSuffix(store.URI(probe), probe)
}

func (s *storeIO) key(name string) (string, error) {
	k, ok := strings.CutPrefix(name, s.base)
	if !ok {
		// A file:// URI may come back as a plain path.
		if strings.HasPrefix(s.base, "file://") {
			if k, ok = strings.CutPrefix(name, strings.TrimPrefix(s.base, "file://")); ok {
				return k, nil
			}
		}
		return "", fmt.Errorf("%s is outside deep storage %s", name, s.base)
	}
	return k, nil
}

func (s *storeIO) Open(name string) (iceio.File, error) {
	b, err := s.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return &memFile{Reader: bytes.NewReader(b), name: name, size: int64(len(b))}, nil
}

func (s *storeIO) ReadFile(name string) ([]byte, error) {
	key, err := s.key(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	rc, err := s.store.Open(s.ctx, key)
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

func (s *storeIO) Remove(name string) error {
	key, err := s.key(name)
	if err != nil {
		return &fs.PathError{Op: "remove", Path: name, Err: err}
	}
	return s.store.Delete(s.ctx, key)
}

func (s *storeIO) WriteFile(name string, p []byte) error {
	key, err := s.key(name)
	if err != nil {
		return &fs.PathError{Op: "write", Path: name, Err: err}
	}
	return s.store.Put(s.ctx, key, func(w io.Writer) error {
		_, err := w.Write(p)
		return err
	})
}

func (s *storeIO) Create(name string) (iceio.FileWriter, error) {
	if _, err := s.key(name); err != nil {
		return nil, &fs.PathError{Op: "create", Path: name, Err: err}
	}
	return &bufferedWriter{io: s, name: name}, nil
}

// bufferedWriter collects a file and puts it whole on Close.
type bufferedWriter struct {
	bytes.Buffer
	io     *storeIO
	name   string
	closed bool
}

func (w *bufferedWriter) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	return w.io.WriteFile(w.name, w.Bytes())
}

// memFile is a whole file read into memory.
type memFile struct {
	*bytes.Reader
	name string
	size int64
}

func (f *memFile) Close() error { return nil }

func (f *memFile) Stat() (fs.FileInfo, error) { return memInfo{f}, nil }

type memInfo struct{ f *memFile }

func (i memInfo) Name() string       { return i.f.name[strings.LastIndexByte(i.f.name, '/')+1:] }
func (i memInfo) Size() int64        { return i.f.size }
func (i memInfo) Mode() fs.FileMode  { return 0o444 }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }
