package storage

import (
	"context"
	"fmt"
	"net/url"
	"strings"
)

// Option configures Open.
type Option func(*openOptions)

type openOptions struct {
	s3 S3Config
}

// WithS3 is how Open reaches the object store of s3:// URIs.
func WithS3(cfg S3Config) Option {
	return func(o *openOptions) { o.s3 = cfg }
}

// Open returns the store that uri names:
//
//   - s3://bucket/prefix: an S3 store (the prefix may be empty), reached
//     as WithS3 says; Open checks that the bucket exists.
//   - file:///abs/path: a Local store there.
//   - anything without "://": a Local store at that path, relative to the
//     working directory or absolute.
//
// Other schemes are refused.
func Open(ctx context.Context, uri string, opts ...Option) (Store, error) {
	var o openOptions
	for _, opt := range opts {
		opt(&o)
	}
	if uri == "" {
		return nil, fmt.Errorf("storage URI is empty")
	}
	if !strings.Contains(uri, "://") {
		return NewLocal(uri)
	}
	u, err := url.Parse(uri)
	if err != nil {
		return nil, fmt.Errorf("storage URI %q: %w", uri, err)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("storage URI %q: credentials, query and fragment are not allowed", uri)
	}
	switch u.Scheme {
	case "s3":
		s, err := NewS3(u.Host, u.Path, o.s3)
		if err != nil {
			return nil, fmt.Errorf("storage URI %q: %w", uri, err)
		}
		if err := s.CheckBucket(ctx); err != nil {
			return nil, fmt.Errorf("storage URI %q: %w", uri, err)
		}
		return s, nil
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return nil, fmt.Errorf("storage URI %q: a file URI names a local path (file:///abs/path)", uri)
		}
		if u.Path == "" {
			return nil, fmt.Errorf("storage URI %q: no path", uri)
		}
		return NewLocal(u.Path)
	}
	return nil, fmt.Errorf("storage URI %q: scheme %q not supported: want s3://, file:// or a path", uri, u.Scheme)
}
