package restcatalog

import (
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"
)

// endpoints are what /v1/config advertises: the reads this server
// answers, and the writes it answers with 403 (advertised so that
// clients send them and hear why, rather than refuse them on their own
// with a message that does not say).
var endpoints = []string{
	"GET /v1/{prefix}/namespaces",
	"GET /v1/{prefix}/namespaces/{namespace}",
	"HEAD /v1/{prefix}/namespaces/{namespace}",
	"GET /v1/{prefix}/namespaces/{namespace}/tables",
	"GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
	"HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
	"GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials",
	"POST /v1/{prefix}/namespaces",
	"DELETE /v1/{prefix}/namespaces/{namespace}",
	"POST /v1/{prefix}/namespaces/{namespace}/properties",
	"POST /v1/{prefix}/namespaces/{namespace}/tables",
	"POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
	"DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
	"POST /v1/{prefix}/namespaces/{namespace}/register",
	"POST /v1/{prefix}/tables/rename",
	"POST /v1/{prefix}/transactions/commit",
}

// catalogConfig is the spec's CatalogConfig.
type catalogConfig struct {
	Defaults  map[string]string `json:"defaults"`
	Overrides map[string]string `json:"overrides"`
	Endpoints []string          `json:"endpoints"`
}

// getConfig answers GET /v1/config: the prefix every route takes. A
// warehouse, when asked for, must be this catalog: its name or its
// warehouse URI.
func (s *Server) getConfig(w http.ResponseWriter, r *http.Request, _ request) *apiError {
	if wh := r.URL.Query().Get("warehouse"); wh != "" && wh != s.cfg.Catalog &&
		strings.TrimSuffix(wh, "/") != strings.TrimSuffix(s.warehouse, "/") {
		return notFound("NoSuchWarehouseException", "no warehouse %s here: this server serves catalog %q, warehouse %s", quote(wh), s.cfg.Catalog, s.warehouse)
	}
	writeJSON(w, http.StatusOK, catalogConfig{
		Defaults:  map[string]string{},
		Overrides: map[string]string{"prefix": s.cfg.Catalog},
		Endpoints: endpoints,
	})
	return nil
}

// oauthTokens answers the spec's deprecated token endpoint, which this
// server does not implement (the spec advises against it): in OAuth2's
// error form, saying what to use instead.
func (s *Server) oauthTokens(w http.ResponseWriter, _ *http.Request, _ request) *apiError {
	writeJSON(w, http.StatusBadRequest, map[string]string{
		"error":             "unsupported_grant_type",
		"error_description": "this catalog issues no tokens: give the client a bearer token from the server's tokens (the token property, not credential)",
	})
	return nil
}

// ClientStorage is what loadTable tells clients about deep storage: plain
// settings for every client, and credentials only for clients that ask
// for them (X-Iceberg-Access-Delegation: vended-credentials), and only
// when configured.
type ClientStorage struct {
	// Properties go into every loadTable's config: for S3, s3.endpoint,
	// s3.path-style-access, client.region. Default none.
	Properties map[string]string
	// Vended are the credentials handed to clients that ask for vended
	// credentials (s3.access-key-id, s3.secret-access-key and
	// s3.session-token), in the config and as the table's
	// storage-credentials. Default none: never handed out.
	Vended map[string]string
}

// vendedKeys are the properties Vended may set.
var vendedKeys = map[string]bool{"s3.access-key-id": true, "s3.secret-access-key": true, "s3.session-token": true}

func (c ClientStorage) validate() error {
	for k := range c.Vended {
		if !vendedKeys[k] {
			return fmt.Errorf("vended credential property %q: want s3.access-key-id, s3.secret-access-key or s3.session-token", k)
		}
	}
	if len(c.Vended) > 0 && (c.Vended["s3.access-key-id"] == "" || c.Vended["s3.secret-access-key"] == "") {
		return fmt.Errorf("vended credentials need both s3.access-key-id and s3.secret-access-key")
	}
	for k := range c.Properties {
		if vendedKeys[k] {
			return fmt.Errorf("client property %q is a credential: give it as a vended credential, handed out only when asked for", k)
		}
	}
	return nil
}

// LogValue shows the properties and whether credentials are vended,
// never the credentials.
func (c ClientStorage) LogValue() slog.Value {
	keys := make([]string, 0, len(c.Properties))
	for k := range c.Properties {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	attrs := make([]slog.Attr, 0, len(keys)+1)
	for _, k := range keys {
		attrs = append(attrs, slog.String(k, c.Properties[k]))
	}
	vended := "no"
	if len(c.Vended) > 0 {
		vended = "yes, key id " + c.Vended["s3.access-key-id"]
	}
	return slog.GroupValue(append(attrs, slog.String("vendedCredentials", vended))...)
}

// String shows what LogValue shows.
func (c ClientStorage) String() string { return c.LogValue().String() }

// wantsVended says whether the request asks for vended credentials.
func wantsVended(r *http.Request) bool {
	for _, v := range r.Header.Values("X-Iceberg-Access-Delegation") {
		for m := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(m), "vended-credentials") {
				return true
			}
		}
	}
	return false
}
