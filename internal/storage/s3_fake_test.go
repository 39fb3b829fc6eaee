package storage

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/minio/minio-go/v7"
)

// fakeS3 is an in-process S3 server (gofakes3 on memory) behind httptest,
// with a log of the requests it got and a hook to fail chosen ones.
type fakeS3 struct {
	srv  *httptest.Server
	core *minio.Core // a raw client, to look behind a store's back

	mu       sync.Mutex
	requests []fakeRequest
	fail     func(r *http.Request) bool // answer 403 AccessDenied instead
}

type fakeRequest struct {
	Method, Path, Query string
	Header              http.Header
}

const fakeBucket = "segments"

func newFakeS3(t *testing.T) *fakeS3 {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket(fakeBucket); err != nil {
		t.Fatal(err)
	}
	faker := gofakes3.New(backend, gofakes3.WithLogger(gofakes3.DiscardLog()))
	f := &fakeS3{}
	inner := faker.Server()
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.requests = append(f.requests, fakeRequest{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone()})
		fail := f.fail != nil && f.fail(r)
		f.mu.Unlock()
		if fail {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>injected</Message></Error>`))
			return
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	core, err := f.config().client()
	if err != nil {
		t.Fatal(err)
	}
	f.core = core
	return f
}

// config reaches the fake with the smallest part size S3 allows.
func (f *fakeS3) config() S3Config {
	return S3Config{
		Endpoint: f.srv.URL, Region: "us-east-1",
		AccessKeyID: "test-key", SecretAccessKey: "test-secret",
		PartSize: minS3PartSize,
	}
}

func (f *fakeS3) store(t *testing.T, prefix string) *S3 {
	t.Helper()
	s, err := NewS3(fakeBucket, prefix, f.config())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (f *fakeS3) setFail(fail func(r *http.Request) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = fail
}

// takeRequests returns the requests since the last call.
func (f *fakeS3) takeRequests() []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.requests
	f.requests = nil
	return r
}

// objects lists every object name in the bucket.
func (f *fakeS3) objects(t *testing.T) []string {
	t.Helper()
	var names []string
	for obj := range f.core.ListObjectsIter(context.Background(), fakeBucket, minio.ListObjectsOptions{Recursive: true}) {
		if obj.Err != nil {
			t.Fatal(obj.Err)
		}
		names = append(names, obj.Key)
	}
	return names
}

// uploads lists the multipart uploads started and neither completed nor
// aborted.
func (f *fakeS3) uploads(t *testing.T) []string {
	t.Helper()
	res, err := f.core.ListMultipartUploads(context.Background(), fakeBucket, "", "", "", "", 1000)
	if minio.ToErrorResponse(err).Code == minio.NoSuchUpload {
		return nil // gofakes3's answer when the bucket never had an upload
	}
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, u := range res.Uploads {
		keys = append(keys, u.Key+" "+u.UploadID)
	}
	return keys
}
