// Package logtail keeps the end of a process's output, so an error about
// that process can show what it said last.
package logtail

import (
	"strings"
	"sync"
)

// Buffer is an io.Writer that keeps the last Size bytes written to it. Safe
// for concurrent use.
type Buffer struct {
	// Size is how many bytes to keep. Default 4 KiB.
	Size int

	mu  sync.Mutex
	buf []byte
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	size := b.Size
	if size <= 0 {
		size = 4 << 10
	}
	b.buf = append(b.buf, p...)
	if len(b.buf) > size {
		b.buf = append(b.buf[:0], b.buf[len(b.buf)-size:]...)
	}
	return len(p), nil
}

// String returns what was kept, trimmed, or "(empty)".
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if s := strings.TrimSpace(string(b.buf)); s != "" {
		return s
	}
	return "(empty)"
}
