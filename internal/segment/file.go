package segment

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"handoff/internal/domain"
)

// WriteFile writes rows to path atomically: it writes path.tmp-<random> in
// the same directory, fsyncs it, renames it over path and fsyncs the
// directory, so a reader sees the old file or the whole new one. Parent
// directories are created; the temp file is removed on any error.
func WriteFile(path string, schema domain.Schema, rows []domain.Row) (Info, error) {
	info, err := writeFile(path, schema, rows)
	if err != nil {
		return Info{}, fmt.Errorf("write segment %s: %w", path, err)
	}
	return info, nil
}

func writeFile(path string, schema domain.Schema, rows []domain.Row) (info Info, err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Info{}, err
	}
	f, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return Info{}, err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close() // may already be closed; the first error matters
			_ = os.Remove(tmp)
		}
	}()
	bw := bufio.NewWriterSize(f, 256<<10)
	sw, err := NewWriter(bw, schema)
	if err != nil {
		return Info{}, err
	}
	if err = sw.Write(rows...); err != nil {
		return Info{}, err
	}
	if info, err = sw.Close(); err != nil {
		return Info{}, err
	}
	if err = bw.Flush(); err != nil {
		return Info{}, err
	}
	if err = f.Chmod(0o644); err != nil { // CreateTemp makes 0600
		return Info{}, err
	}
	if err = f.Sync(); err != nil {
		return Info{}, err
	}
	if err = f.Close(); err != nil {
		return Info{}, err
	}
	if err = os.Rename(tmp, path); err != nil {
		return Info{}, err
	}
	return info, syncDir(dir)
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}
