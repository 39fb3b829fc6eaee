package main

import (
	"fmt"
	"net/url"
	"strings"

	"handoff/internal/redact"
)

// checkStorage refuses, before anything connects, a deep storage or
// staging URI (what names which) whose scheme storage.Open does not take;
// storage.Open checks the rest (bucket name, path) when the worker starts.
func checkStorage(what, loc string) error {
	if loc == "" || !strings.Contains(loc, "://") {
		return nil // a directory
	}
	u, err := url.Parse(loc)
	if err != nil {
		return fmt.Errorf(what+" %q: not a URI: want a directory, file:///abs/path or s3://bucket/prefix", redact.Userinfo(loc))
	}
	if u.User != nil {
		return fmt.Errorf(what+" %q: credentials do not belong in the URI: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY", redact.Userinfo(loc))
	}
	switch u.Scheme {
	case "s3":
		if u.Host == "" {
			return fmt.Errorf(what+" %q: no bucket: want s3://bucket/prefix", loc)
		}
	case "file":
		if u.Path == "" {
			return fmt.Errorf(what+" %q: no path: want file:///abs/path", loc)
		}
	default:
		return fmt.Errorf(what+" %q: scheme %q not supported: want a directory, file:///abs/path or s3://bucket/prefix", loc, u.Scheme)
	}
	return nil
}
