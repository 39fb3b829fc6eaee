package restcatalog

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"handoff/internal/domain"
)

// FuzzParsePath: the router never panics, answers a path it refuses with
// a 400 or 404 that encodes as the spec's error, and lets through only
// names that follow the datasource name rule: nothing that could walk a
// path, end a string or carry a separator.
func FuzzParsePath(f *testing.F) {
	for _, p := range []string{
		"/v1/config", "/v1/oauth/tokens", "/v1/handoff/namespaces", "/v1/handoff/namespaces/handoff",
		"/v1/handoff/namespaces/handoff/tables", "/v1/handoff/namespaces/handoff/tables/wiki",
		"/v1/handoff/namespaces/handoff/tables/wiki/credentials", "/v1/handoff/namespaces/a%1Fb/tables/c",
		"/v1/handoff/namespaces/handoff/properties", "/v1/handoff/namespaces/handoff/register",
		"/v1/handoff/tables/rename", "/v1/handoff/transactions/commit",
		"/v1/handoff/namespaces/handoff/tables/..", "/v1/handoff/namespaces/handoff/tables/%2e%2e%2f",
		"/v1/handoff/namespaces/..%2F..%2Fetc/tables/passwd", "/v1/handoff/namespaces/handoff/tables/a%00b",
		"/v1/handoff/namespaces/handoff/tables/%ff", "/v1//namespaces", "/v1/%", "/v1/handoff/namespaces/%1F%1F",
		"/v1/handoff/namespaces/handoff/tables/x'%3B--", "/v1/handoff/namespaces/h.a/tables/x",
	} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, path string) {
		req, err := parsePath(path)
		if err != nil {
			if err.Code != http.StatusBadRequest && err.Code != http.StatusNotFound {
				t.Fatalf("parsePath(%q): code %d", path, err.Code)
			}
			if err.Message == "" || err.Type == "" || !utf8.ValidString(err.Message) {
				t.Fatalf("parsePath(%q): error %+v", path, err)
			}
			if _, jerr := json.Marshal(err); jerr != nil {
				t.Fatalf("parsePath(%q): the error does not encode: %v", path, jerr)
			}
			return
		}
		if req.route == 0 {
			t.Fatalf("parsePath(%q): no route and no error", path)
		}
		for _, part := range req.namespace {
			if domain.ValidateName("", part) != nil || strings.Contains(part, ".") {
				t.Fatalf("parsePath(%q): namespace part %q let through", path, part)
			}
		}
		if req.route == routeTable || req.route == routeTableCredentials {
			if domain.ValidateName("", req.table) != nil {
				t.Fatalf("parsePath(%q): table %q let through", path, req.table)
			}
		}
		if req.route >= routeNamespace && req.route <= routeTableCredentials && len(req.namespace) == 0 {
			t.Fatalf("parsePath(%q): route %d without a namespace", path, req.route)
		}
	})
}

// FuzzBearer: the token check never panics and accepts exactly the
// tokens configured, with the scheme in any case and spaces around the
// token, and nothing else.
func FuzzBearer(f *testing.F) {
	const secret = "fuzz-token-0123456789abcdef"
	a, err := newAuthenticator([]Token{{Name: "fuzz", Secret: secret}}, time.Now)
	if err != nil {
		f.Fatal(err)
	}
	for _, h := range []string{"", "Bearer " + secret, "bearer " + secret, "Bearer", "Basic " + secret, "Bearer " + secret[:10], "Bearer  " + secret + " ", "Bearer \x00"} {
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, header string) {
		name, err := a.check(header)
		scheme, tok, _ := strings.Cut(header, " ")
		want := strings.EqualFold(scheme, "Bearer") && strings.TrimSpace(tok) == secret
		if (err == nil) != want {
			t.Fatalf("check(%q) = %q, %v; want accepted %v", header, name, err, want)
		}
		if err != nil && (err.Code != http.StatusUnauthorized || strings.Contains(err.Message, secret)) {
			t.Fatalf("check(%q): %+v", header, err)
		}
		if err == nil && name != "fuzz" {
			t.Fatalf("check(%q): name %q", header, name)
		}
	})
}
