package storage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/minio/minio-go/v7"
)

// Unfinished finds and removes what writers killed in the middle of a Put
// left behind: Local's temporary files, S3's incomplete multipart uploads.
// Neither List nor Open ever shows them; the orphan sweep removes them
// once they are older than its grace.
type Unfinished interface {
	// ListUnfinished returns the unfinished writes whose keys start with
	// prefix, sorted: Key names the write for DeleteUnfinished, Modified
	// is when it last wrote (Local) or began (S3).
	ListUnfinished(ctx context.Context, prefix string) ([]Object, error)
	// DeleteUnfinished removes one; a missing one is not an error.
	DeleteUnfinished(ctx context.Context, key string) error
}

var (
	_ Unfinished = (*Local)(nil)
	_ Unfinished = (*S3)(nil)
)

// ListUnfinished lists the temporary files of Puts that never renamed them
// (<key>.tmp-<random>).
func (l *Local) ListUnfinished(ctx context.Context, prefix string) ([]Object, error) {
	return l.walk(ctx, prefix, true)
}

// DeleteUnfinished removes a temporary file ListUnfinished listed; it
// refuses any other key.
func (l *Local) DeleteUnfinished(ctx context.Context, key string) error {
	i := strings.LastIndex(key, tempMarker)
	if i < 0 || strings.Contains(key[i:], "/") {
		return fmt.Errorf("delete unfinished %s: not a temporary file", key)
	}
	if err := checkKey(key[:i]); err != nil { // the key its Put was writing
		return fmt.Errorf("delete unfinished %s: %w", key, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("delete unfinished %s: %w", key, err)
	}
	if err := os.Remove(l.Path(key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete unfinished %s: %w", key, err)
	}
	return nil
}

// ListUnfinished lists the incomplete multipart uploads under prefix (an
// upload is aborted when its Put fails, but not when its process dies).
func (s *S3) ListUnfinished(ctx context.Context, prefix string) ([]Object, error) {
	if err := checkPrefix(prefix); err != nil {
		return nil, fmt.Errorf("list unfinished %q: %w", prefix, err)
	}
	var objs []Object
	for up := range s.core.ListIncompleteUploads(ctx, s.bucket, s.prefix+prefix, true) {
		if up.Err != nil {
			if minio.ToErrorResponse(up.Err).Code == minio.NoSuchUpload {
				break // some servers' answer when the bucket never had one
			}
			return nil, fmt.Errorf("list unfinished %q: %w", prefix, up.Err)
		}
		objs = append(objs, Object{Key: strings.TrimPrefix(up.Key, s.prefix), Size: up.Size, Modified: up.Initiated})
	}
	slices.SortFunc(objs, func(a, b Object) int { return strings.Compare(a.Key, b.Key) })
	return objs, nil
}

// DeleteUnfinished aborts the incomplete uploads of key.
func (s *S3) DeleteUnfinished(ctx context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return fmt.Errorf("delete unfinished %s: %w", key, err)
	}
	err := s.core.RemoveIncompleteUpload(ctx, s.bucket, s.object(key))
	if err != nil && minio.ToErrorResponse(err).Code != minio.NoSuchUpload {
		return fmt.Errorf("delete unfinished %s: %w", key, err)
	}
	return nil
}
