package storage

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

func TestS3Contract(t *testing.T) {
	testStoreContract(t, func(t *testing.T) Store {
		f := newFakeS3(t)
		s := f.store(t, "deep/root")
		t.Cleanup(func() {
			if ups := f.uploads(t); len(ups) != 0 {
				t.Errorf("multipart uploads left behind: %q", ups)
			}
		})
		return s
	})
}

// requestKinds names each request as the S3 operation it is.
func requestKinds(reqs []fakeRequest) []string {
	var kinds []string
	for _, r := range reqs {
		q := r.Query
		switch {
		case r.Method == http.MethodPost && strings.Contains(q, "uploads"):
			kinds = append(kinds, "start")
		case r.Method == http.MethodPut && strings.Contains(q, "partNumber"):
			kinds = append(kinds, "part")
		case r.Method == http.MethodPost && strings.Contains(q, "uploadId"):
			kinds = append(kinds, "complete")
		case r.Method == http.MethodDelete && strings.Contains(q, "uploadId"):
			kinds = append(kinds, "abort")
		case r.Method == http.MethodPut:
			kinds = append(kinds, "put")
		default:
			kinds = append(kinds, r.Method)
		}
	}
	return kinds
}

func TestS3PutRequests(t *testing.T) {
	f := newFakeS3(t)
	s := f.store(t, "p")
	cases := []struct {
		size int
		want []string
	}{
		{0, []string{"put"}},
		{1000, []string{"put"}},
		{minS3PartSize, []string{"put"}}, // exactly one part still fits one PUT
		{minS3PartSize + 1, []string{"start", "part", "part", "complete"}},
		{bigSize, []string{"start", "part", "part", "part", "complete"}},
	}
	for _, c := range cases {
		f.takeRequests()
		putBytes(t, s, "k", randomBytes(1, c.size))
		reqs := f.takeRequests()
		if got := requestKinds(reqs); !reflect.DeepEqual(got, c.want) {
			t.Errorf("size %d: requests %q, want %q", c.size, got, c.want)
		}
		// Every body is signed with its SHA-256 and carries its MD5, so the
		// server checks it, even over plain HTTP.
		for _, r := range reqs {
			if r.Method != http.MethodPut {
				continue
			}
			if sha := r.Header.Get("X-Amz-Content-Sha256"); !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(sha) {
				t.Errorf("size %d: %s %s?%s: X-Amz-Content-Sha256 %q, want the payload's hash", c.size, r.Method, r.Path, r.Query, sha)
			}
			if r.Header.Get("Content-Md5") == "" {
				t.Errorf("size %d: %s %s?%s without Content-MD5", c.size, r.Method, r.Path, r.Query)
			}
		}
		if got := readBytes(t, s, "k"); !bytes.Equal(got, randomBytes(1, c.size)) {
			t.Errorf("size %d: read back %d bytes that differ", c.size, len(got))
		}
	}
}

func TestS3FailedMultipartIsAborted(t *testing.T) {
	boom := errors.New("encoder failed")
	cases := map[string]func(ctx context.Context, cancel context.CancelFunc, w io.Writer) error{
		"write error after two parts": func(_ context.Context, _ context.CancelFunc, w io.Writer) error {
			if _, err := w.Write(randomBytes(2, bigSize)); err != nil {
				return err
			}
			return boom
		},
		"context cancelled after two parts": func(_ context.Context, cancel context.CancelFunc, w io.Writer) error {
			if _, err := w.Write(randomBytes(2, bigSize)); err != nil {
				return err
			}
			cancel()
			_, err := w.Write([]byte("more"))
			return err
		},
		"panic after two parts": func(_ context.Context, _ context.CancelFunc, w io.Writer) error {
			if _, err := w.Write(randomBytes(2, bigSize)); err != nil {
				return err
			}
			panic(boom)
		},
	}
	for name, write := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFakeS3(t)
			s := f.store(t, "")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			err := func() (err error) {
				defer func() {
					if p := recover(); p != nil {
						err = p.(error)
					}
				}()
				return s.Put(ctx, "seg", func(w io.Writer) error { return write(ctx, cancel, w) })
			}()
			if err == nil {
				t.Fatal("Put succeeded")
			}
			if kinds := requestKinds(f.takeRequests()); !reflect.DeepEqual(kinds, []string{"start", "part", "part", "abort"}) {
				t.Fatalf("requests %q, want two parts then the abort", kinds)
			}
			if objs := f.objects(t); len(objs) != 0 {
				t.Fatalf("objects after the failed Put: %q", objs)
			}
			if ups := f.uploads(t); len(ups) != 0 {
				t.Fatalf("uploads after the failed Put: %q", ups)
			}
		})
	}
}

func TestS3ServerFailureKeepsOldObject(t *testing.T) {
	for _, failing := range []string{"put", "start", "part", "complete"} {
		t.Run(failing, func(t *testing.T) {
			f := newFakeS3(t)
			s := f.store(t, "deep")
			old := randomBytes(3, 100)
			putBytes(t, s, "ds/seg", old)
			f.setFail(func(r *http.Request) bool {
				return requestKinds([]fakeRequest{{Method: r.Method, Query: r.URL.RawQuery}})[0] == failing
			})
			size := bigSize
			if failing == "put" {
				size = 1000
			}
			err := s.Put(context.Background(), "ds/seg", func(w io.Writer) error {
				_, err := w.Write(randomBytes(4, size))
				return err
			})
			if err == nil || !strings.Contains(err.Error(), "ds/seg") {
				t.Fatalf("Put err = %v, want the injected failure naming the key", err)
			}
			f.setFail(nil)
			if got := readBytes(t, s, "ds/seg"); !bytes.Equal(got, old) {
				t.Fatalf("the failed Put changed the object: %d bytes", len(got))
			}
			if ups := f.uploads(t); len(ups) != 0 {
				t.Fatalf("uploads left: %q", ups)
			}
			want := randomBytes(5, size)
			putBytes(t, s, "ds/seg", want)
			if got := readBytes(t, s, "ds/seg"); !bytes.Equal(got, want) {
				t.Fatalf("retry read back %d bytes that differ", len(got))
			}
		})
	}
}

func TestS3PrefixAndURI(t *testing.T) {
	f := newFakeS3(t)
	s := f.store(t, "/deep/root/")
	put(t, s, "ds/a b/seg.parquet", "x")
	if got, want := s.URI("ds/a b/seg.parquet"), "s3://segments/deep/root/ds/a b/seg.parquet"; got != want {
		t.Fatalf("URI = %s, want %s", got, want)
	}
	// Objects beside the store's prefix are not its keys.
	other := f.store(t, "")
	put(t, other, "deep/rootx/y", "y")
	put(t, other, "elsewhere/z", "z")
	// A console's folder marker, which no store key can name.
	md5sum, sha := sums(nil)
	if _, err := f.core.PutObject(context.Background(), fakeBucket, "deep/root/ds/", strings.NewReader(""), 0, md5sum, sha, minio.PutObjectOptions{DisableContentSha256: true}); err != nil {
		t.Fatal(err)
	}
	if objs := f.objects(t); !reflect.DeepEqual(objs, []string{"deep/root/ds/", "deep/root/ds/a b/seg.parquet", "deep/rootx/y", "elsewhere/z"}) {
		t.Fatalf("bucket holds %q", objs)
	}
	assertList(t, s, "", []string{"ds/a b/seg.parquet"})
	assertList(t, other, "deep/", []string{"deep/root/ds/a b/seg.parquet", "deep/rootx/y"})
	if got := other.URI("k"); got != "s3://segments/k" {
		t.Fatalf("URI without prefix = %s", got)
	}
}

func TestS3CheckBucket(t *testing.T) {
	f := newFakeS3(t)
	ctx := context.Background()
	if err := f.store(t, "").CheckBucket(ctx); err != nil {
		t.Fatalf("existing bucket: %v", err)
	}
	missing, err := NewS3("no-such-bucket", "", f.config())
	if err != nil {
		t.Fatal(err)
	}
	if err := missing.CheckBucket(ctx); err == nil || !strings.Contains(err.Error(), "no-such-bucket does not exist") {
		t.Fatalf("missing bucket err = %v", err)
	}
	down := f.config()
	down.Endpoint = "http://127.0.0.1:1"
	unreachable, err := NewS3(fakeBucket, "", down)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := unreachable.CheckBucket(ctx); err == nil {
		t.Fatal("unreachable endpoint: no error")
	}
}

func TestNewS3Refuses(t *testing.T) {
	good := S3Config{Endpoint: "http://minio:9000", AccessKeyID: "k", SecretAccessKey: "s"}
	cases := map[string]struct {
		bucket, prefix string
		cfg            S3Config
		want           string
	}{
		"bucket name":   {"Bad_Bucket", "", good, "bucket"},
		"empty bucket":  {"", "", good, "bucket"},
		"prefix ..":     {"b-1", "../x", good, ".."},
		"prefix //":     {"b-1", "a//b", good, "empty"},
		"part size":     {"b-1", "", S3Config{Endpoint: good.Endpoint, PartSize: 1 << 20}, "part size"},
		"endpoint path": {"b-1", "", S3Config{Endpoint: "http://minio:9000/x"}, "want http"},
		"no scheme":     {"b-1", "", S3Config{Endpoint: "minio:9000"}, "want http"},
		"ftp":           {"b-1", "", S3Config{Endpoint: "ftp://minio"}, "want http"},
		"half creds":    {"b-1", "", S3Config{AccessKeyID: "k"}, "both"},
		"token only":    {"b-1", "", S3Config{SessionToken: "t"}, "both"},
	}
	for name, c := range cases {
		if _, err := NewS3(c.bucket, c.prefix, c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one mentioning %q", name, err, c.want)
		}
	}
	for _, cfg := range []S3Config{good, {}, {Endpoint: "https://s3.eu-west-1.amazonaws.com", Region: "eu-west-1"}} {
		if _, err := NewS3("b-1", "a/b", cfg); err != nil {
			t.Errorf("%+v: %v", cfg, err)
		}
	}
}

func TestS3DeleteAndOpenErrorsAreNotNotFound(t *testing.T) {
	f := newFakeS3(t)
	s := f.store(t, "")
	put(t, s, "k", "v")
	f.setFail(func(*http.Request) bool { return true })
	if _, err := s.Open(context.Background(), "k"); err == nil || errors.Is(err, ErrNotFound) {
		t.Fatalf("Open with the server refusing: err = %v, want a failure that is not ErrNotFound", err)
	}
	if err := s.Delete(context.Background(), "k"); err == nil {
		t.Fatal("Delete with the server refusing succeeded")
	}
	if _, err := s.List(context.Background(), ""); err == nil {
		t.Fatal("List with the server refusing succeeded")
	}
	f.setFail(nil)
	if got := read(t, s, "k"); got != "v" {
		t.Fatalf("read %q", got)
	}
	var resp minio.ErrorResponse
	_, err := f.core.StatObject(context.Background(), fakeBucket, "nope", minio.StatObjectOptions{})
	if !errors.As(err, &resp) || resp.Code != minio.NoSuchKey || !isNoSuchKey(err) {
		t.Fatalf("a missing object's error %v is not NoSuchKey", err)
	}
}

// A part that fails while the writer ignores the Write error must not
// lead to an object made of the other parts.
func TestS3FailedPartIgnoredByWriter(t *testing.T) {
	f := newFakeS3(t)
	s := f.store(t, "")
	failed := false // once: a retried part 2 would then succeed
	f.setFail(func(r *http.Request) bool {
		if failed || r.Method != http.MethodPut || !strings.Contains(r.URL.RawQuery, "partNumber=2") {
			return false
		}
		failed = true
		return true
	})
	err := s.Put(context.Background(), "seg", func(w io.Writer) error {
		for i := range 4 {
			_, _ = w.Write(randomBytes(byte(i), minS3PartSize)) // errors ignored
		}
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "upload part 2") {
		t.Fatalf("err = %v, want the failed part 2", err)
	}
	if objs := f.objects(t); len(objs) != 0 {
		t.Fatalf("objects: %q", objs)
	}
	if ups := f.uploads(t); len(ups) != 0 {
		t.Fatalf("uploads left: %q", ups)
	}
}
