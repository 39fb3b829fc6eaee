package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestRun(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/readyz":
			w.Write([]byte("ok"))
		case "/down":
			http.Error(w, "kafka: connection refused", http.StatusServiceUnavailable)
		case "/slow":
			<-release
		default:
			http.Redirect(w, r, "/readyz", http.StatusFound)
		}
	}))
	defer srv.Close()
	defer close(release)
	cases := []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{srv.URL + "/readyz"}, 0, ""},
		{[]string{srv.URL + "/"}, 0, ""}, // redirects are followed
		{[]string{srv.URL + "/down"}, 1, "503 Service Unavailable: kafka: connection refused"},
		{[]string{"-timeout", "200ms", srv.URL + "/slow"}, 1, "deadline exceeded"},
		{[]string{"http://127.0.0.1:1/readyz"}, 1, "connection refused"},
		{nil, 2, "usage"},
		{[]string{"a", "b"}, 2, "usage"},
		{[]string{"-bogus", "x"}, 2, "bogus"},
	}
	for _, c := range cases {
		var stderr bytes.Buffer
		start := time.Now()
		if code := run(c.args, &stderr); code != c.code || !strings.Contains(stderr.String(), c.stderr) {
			t.Errorf("run(%q) = %d, stderr %q; want %d and %q", c.args, code, stderr.String(), c.code, c.stderr)
		}
		if time.Since(start) > 3*time.Second {
			t.Errorf("run(%q) took %s", c.args, time.Since(start))
		}
	}
}
