package storage

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Local is a Store in a directory on local disk; key "a/b" is file root/a/b.
type Local struct {
	root string
}

var _ Store = (*Local)(nil)

// NewLocal creates root if needed and returns a store rooted at its
// absolute path.
func NewLocal(root string) (*Local, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("local storage %s: %w", root, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("local storage %s: %w", root, err)
	}
	return &Local{root: abs}, nil
}

// Path returns the absolute file path of key. It does not validate key:
// pass keys that Put accepts.
func (l *Local) Path(key string) string {
	return filepath.Join(l.root, filepath.FromSlash(key))
}

// URI returns file:///abs/path/key, percent-encoded where needed.
func (l *Local) URI(key string) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(l.Path(key))}
	return u.String()
}

// Put writes key through a temp file in the same directory, fsyncs it,
// renames it into place and fsyncs the directory.
func (l *Local) Put(ctx context.Context, key string, write func(w io.Writer) error) error {
	if err := checkKey(key); err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	if err := l.put(ctx, l.Path(key), write); err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	return nil
}

func (l *Local) put(ctx context.Context, path string, write func(w io.Writer) error) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, filepath.Base(path)+tempMarker+"*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = f.Close() // may already be closed; the first error matters
			_ = os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(ctxWriter{ctx, f}, 256<<10)
	if err = write(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil { // CreateTemp makes 0600
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = ctx.Err(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return err
	}
	return syncDir(dir)
}

// ctxWriter stops a long Put once its context is done.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (cw ctxWriter) Write(p []byte) (int, error) {
	if err := cw.ctx.Err(); err != nil {
		return 0, err
	}
	return cw.w.Write(p)
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// Open returns the file at key.
func (l *Local) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	if err := checkKey(key); err != nil {
		return nil, fmt.Errorf("open %s: %w", key, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("open %s: %w", key, err)
	}
	f, err := os.Open(l.Path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("open %s: %w", key, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", key, err)
	}
	if st, err := f.Stat(); err != nil || st.IsDir() {
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", key, err)
		}
		return nil, fmt.Errorf("open %s: is a directory: %w", key, ErrNotFound)
	}
	return f, nil
}

// Delete removes the file at key. Emptied directories stay: removing them
// would race with a concurrent Put into the same directory.
func (l *Local) Delete(ctx context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	if err := os.Remove(l.Path(key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	return nil
}

// DeleteDir removes the directory of dir and everything in it.
func (l *Local) DeleteDir(ctx context.Context, dir string) error {
	if err := checkDir(dir); err != nil {
		return fmt.Errorf("delete %s: %w", dir, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("delete %s: %w", dir, err)
	}
	if err := os.RemoveAll(l.Path(dir)); err != nil {
		return fmt.Errorf("delete %s: %w", dir, err)
	}
	return nil
}

// List walks only the directory that holds prefix's last "/", so listing
// one datasource does not scan the whole store.
func (l *Local) List(ctx context.Context, prefix string) ([]string, error) {
	objs, err := l.ListObjects(ctx, prefix)
	return keysOf(objs), err
}

// ListObjects implements Store.
func (l *Local) ListObjects(ctx context.Context, prefix string) ([]Object, error) {
	return l.walk(ctx, prefix, false)
}

// walk lists the files under prefix: the whole ones, or with unfinished
// the temporary files of Puts that never renamed them.
func (l *Local) walk(ctx context.Context, prefix string, unfinished bool) ([]Object, error) {
	if err := checkPrefix(prefix); err != nil {
		return nil, fmt.Errorf("list %q: %w", prefix, err)
	}
	start := l.root
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		start = l.Path(prefix[:i])
	}
	var objs []Object
	err := filepath.WalkDir(start, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == start && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(l.root, path)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			if path != start && !strings.HasPrefix(key+"/", prefix) && !strings.HasPrefix(prefix, key+"/") {
				return fs.SkipDir
			}
		case d.Type().IsRegular() && strings.Contains(d.Name(), tempMarker) == unfinished && strings.HasPrefix(key, prefix):
			info, err := d.Info()
			if errors.Is(err, fs.ErrNotExist) {
				return nil // deleted while listed
			}
			if err != nil {
				return err
			}
			objs = append(objs, Object{Key: key, Size: info.Size(), Modified: info.ModTime()})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list %q: %w", prefix, err)
	}
	slices.SortFunc(objs, func(a, b Object) int { return strings.Compare(a.Key, b.Key) })
	return objs, nil
}
