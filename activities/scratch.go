package activities

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"handoff/internal/storage"
)

// scratch is the local directory for a publish's temporary files.
func (a *Activities) scratch() string {
	if a.Scratch != "" {
		return a.Scratch
	}
	return os.TempDir()
}

// localChunks returns a local path for each staging key: the file itself
// when staging is a local directory, else a copy fetched into dir, which
// the caller removes.
func (a *Activities) localChunks(ctx context.Context, keys []string, dir string) ([]string, error) {
	paths := make([]string, len(keys))
	if l, ok := a.Staging.(*storage.Local); ok {
		for i, k := range keys {
			paths[i] = l.Path(k)
		}
		return paths, nil
	}
	for i, k := range keys {
		paths[i] = filepath.Join(dir, "chunk-"+strconv.Itoa(i)+".run")
		if err := fetch(ctx, a.Staging, k, paths[i]); err != nil {
			return nil, fmt.Errorf("fetch staging file %s: %w", a.Staging.URI(k), err)
		}
	}
	return paths, nil
}

func fetch(ctx context.Context, s storage.Store, key, path string) (err error) {
	r, err := s.Open(ctx, key)
	if err != nil {
		return err
	}
	defer r.Close()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	_, err = io.Copy(f, r)
	return err
}
