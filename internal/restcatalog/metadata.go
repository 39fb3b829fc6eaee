package restcatalog

import (
	"bytes"
	"container/list"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"golang.org/x/sync/singleflight"

	"handoff/internal/storage"
)

// metadataFiles reads table metadata files from deep storage and keeps
// the most recently served ones, up to a number of bytes. A metadata file
// never changes once written (each commit writes a new one), so an entry
// is good for as long as it is kept. Concurrent loads of one file share
// one read, and at most maxReads files are read at once, so a burst of
// loads costs one copy of each file however many clients ask.
type metadataFiles struct {
	deep     storage.Store
	maxBytes int64
	maxFile  int64
	reads    chan struct{} // a slot per read in flight
	group    singleflight.Group

	mu      sync.Mutex
	bytes   int64
	entries map[string]*list.Element // by location; values are *metadataFile
	lru     list.List                // front: most recently used
}

type metadataFile struct {
	loc  string
	body []byte
}

func newMetadataFiles(deep storage.Store, maxBytes, maxFile int64, maxReads int) *metadataFiles {
	return &metadataFiles{deep: deep, maxBytes: maxBytes, maxFile: maxFile, reads: make(chan struct{}, maxReads), entries: map[string]*list.Element{}}
}

// errMetadataMissing: the file a pointer named is gone (maintenance swept
// it after later commits): read the pointer again.
var errMetadataMissing = errors.New("metadata file missing")

// get returns the metadata file at loc, a JSON object.
func (m *metadataFiles) get(ctx context.Context, loc string) ([]byte, error) {
	if b := m.cached(loc); b != nil {
		return b, nil
	}
	ch := m.group.DoChan(loc, func() (any, error) {
		// Not the caller's context: the read is shared with whoever joins.
		return m.read(context.WithoutCancel(ctx), loc)
	})
	select {
	case res := <-ch:
		if res.Err != nil {
			return nil, res.Err
		}
		return res.Val.([]byte), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (m *metadataFiles) cached(loc string) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.entries[loc]; ok {
		m.lru.MoveToFront(e)
		return e.Value.(*metadataFile).body
	}
	return nil
}

func (m *metadataFiles) read(ctx context.Context, loc string) ([]byte, error) {
	key, err := storage.KeyOf(m.deep, loc)
	if err != nil {
		return nil, fmt.Errorf("metadata location %s: %w", loc, err)
	}
	m.reads <- struct{}{}
	defer func() { <-m.reads }()
	rc, err := m.deep.Open(ctx, key)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s", errMetadataMissing, loc)
	}
	if err != nil {
		return nil, fmt.Errorf("open metadata %s: %w", loc, err)
	}
	defer rc.Close()
	body, err := io.ReadAll(io.LimitReader(rc, m.maxFile+1))
	if err != nil {
		return nil, fmt.Errorf("read metadata %s: %w", loc, err)
	}
	if int64(len(body)) > m.maxFile {
		return nil, fmt.Errorf("metadata %s is larger than %d bytes", loc, m.maxFile)
	}
	// Served as stored, inside the answer's JSON: it must be an object.
	// Deep storage writes files whole (a rename, an S3 upload completed)
	// and handoff wrote this one with encoding/json, so its ends suffice:
	// a full parse of a 10 MB file would cost a cold load tens of ms.
	if t := bytes.TrimSpace(body); len(t) < 2 || t[0] != '{' || t[len(t)-1] != '}' {
		return nil, fmt.Errorf("metadata %s is not a JSON object", loc)
	}
	m.keep(loc, body)
	return body, nil
}

// keep caches body, dropping the least recently used files beyond
// maxBytes; a file larger than that is served and not kept.
func (m *metadataFiles) keep(loc string, body []byte) {
	size := int64(len(body))
	if size > m.maxBytes {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.entries[loc]; ok {
		return
	}
	m.entries[loc] = m.lru.PushFront(&metadataFile{loc: loc, body: body})
	m.bytes += size
	for m.bytes > m.maxBytes {
		last := m.lru.Back()
		f := last.Value.(*metadataFile)
		m.lru.Remove(last)
		delete(m.entries, f.loc)
		m.bytes -= int64(len(f.body))
	}
}

// stats returns the files and bytes kept.
func (m *metadataFiles) stats() (files int, bytes int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.entries), m.bytes
}
