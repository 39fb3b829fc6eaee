package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/s3utils"
)

// S3 is a Store in an S3-compatible bucket (AWS S3, MinIO, ...): key "a/b"
// is object prefix/a/b. Put writes an object whole or not at all; see
// upload for how.
type S3 struct {
	core     *minio.Core
	bucket   string
	prefix   string // "" or "p/q/": what every object name of this store starts with
	partSize int
}

var _ Store = (*S3)(nil)

// NewS3 returns the store of objects under prefix in bucket. It makes no
// request: CheckBucket does.
func NewS3(bucket, prefix string, cfg S3Config) (*S3, error) {
	if err := s3utils.CheckValidBucketNameStrict(bucket); err != nil {
		return nil, fmt.Errorf("S3 bucket %q: %w", bucket, err)
	}
	prefix = strings.TrimSuffix(strings.TrimPrefix(prefix, "/"), "/")
	if err := checkElems(prefix); err != nil {
		return nil, fmt.Errorf("S3 prefix: %w", err)
	}
	if prefix != "" {
		prefix += "/"
	}
	core, err := cfg.client()
	if err != nil {
		return nil, err
	}
	return &S3{core: core, bucket: bucket, prefix: prefix, partSize: cfg.partSize()}, nil
}

// CheckBucket asks the server whether the bucket exists and the
// credentials may see it.
func (s *S3) CheckBucket(ctx context.Context) error {
	ok, err := s.core.BucketExists(ctx, s.bucket)
	if err != nil {
		return fmt.Errorf("S3 bucket %s: %w", s.bucket, err)
	}
	if !ok {
		return fmt.Errorf("S3 bucket %s does not exist", s.bucket)
	}
	return nil
}

// object is the object name of key.
func (s *S3) object(key string) string { return s.prefix + key }

// URI returns s3://bucket/prefix/key.
func (s *S3) URI(key string) string { return "s3://" + s.bucket + "/" + s.object(key) }

// Put uploads what write writes as the object at key. The object appears
// only when write returned nil and the whole stream is stored: a failed
// write, a cancelled context or a failed request leaves the previous
// object (or none) in place, and a started multipart upload is aborted.
func (s *S3) Put(ctx context.Context, key string, write func(w io.Writer) error) (err error) {
	if err := checkKey(key); err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	u := &upload{ctx: ctx, s: s, object: s.object(key)}
	// Deferred so that a panicking write aborts the upload too.
	defer func() {
		if abortErr := u.abort(); abortErr != nil && err != nil {
			err = errors.Join(err, fmt.Errorf("put %s: %w", key, abortErr))
		}
	}()
	if err := write(u); err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	if err := u.finish(); err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	return nil
}

// Open returns the object at key, streamed from one GET.
func (s *S3) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	if err := checkKey(key); err != nil {
		return nil, fmt.Errorf("open %s: %w", key, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("open %s: %w", key, err)
	}
	body, _, _, err := s.core.GetObject(ctx, s.bucket, s.object(key), minio.GetObjectOptions{})
	if isNoSuchKey(err) {
		return nil, fmt.Errorf("open %s: %w", key, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", key, err)
	}
	return body, nil
}

// Delete removes the object at key; S3 answers a missing key with
// success, and so does Delete.
func (s *S3) Delete(ctx context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	err := s.core.RemoveObject(ctx, s.bucket, s.object(key), minio.RemoveObjectOptions{})
	if err != nil && !isNoSuchKey(err) {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	return nil
}

// DeleteDir deletes every object under dir. S3 writes are whole or
// nothing, so there are no unfinished ones to find.
func (s *S3) DeleteDir(ctx context.Context, dir string) error {
	if err := checkDir(dir); err != nil {
		return fmt.Errorf("delete %s: %w", dir, err)
	}
	keys, err := s.List(ctx, dir)
	if err != nil {
		return fmt.Errorf("delete %s: %w", dir, err)
	}
	for _, k := range keys {
		if err := s.Delete(ctx, k); err != nil {
			return err
		}
	}
	return nil
}

// List returns the sorted keys of the objects whose names start with the
// store's prefix and then prefix, a plain string prefix. Zero-byte "folder"
// markers that some consoles create (names ending in "/") are not keys and
// are left out.
func (s *S3) List(ctx context.Context, prefix string) ([]string, error) {
	objs, err := s.ListObjects(ctx, prefix)
	return keysOf(objs), err
}

// ListObjects implements Store.
func (s *S3) ListObjects(ctx context.Context, prefix string) ([]Object, error) {
	if err := checkPrefix(prefix); err != nil {
		return nil, fmt.Errorf("list %q: %w", prefix, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("list %q: %w", prefix, err)
	}
	var objs []Object
	opts := minio.ListObjectsOptions{Prefix: s.prefix + prefix, Recursive: true}
	for obj := range s.core.ListObjectsIter(ctx, s.bucket, opts) {
		if obj.Err != nil {
			return nil, fmt.Errorf("list %q: %w", prefix, obj.Err)
		}
		if key := strings.TrimPrefix(obj.Key, s.prefix); !strings.HasSuffix(key, "/") {
			objs = append(objs, Object{Key: key, Size: obj.Size, Modified: obj.LastModified})
		}
	}
	slices.SortFunc(objs, func(a, b Object) int { return strings.Compare(a.Key, b.Key) })
	return objs, nil
}

func isNoSuchKey(err error) bool {
	return err != nil && minio.ToErrorResponse(err).Code == minio.NoSuchKey
}
