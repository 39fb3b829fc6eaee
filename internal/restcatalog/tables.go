package restcatalog

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// Paging of listTables: a client that sends pageToken gets pages of
// pageSize (default defaultPageSize, at most maxPageSize) and a
// next-page-token; one that does not gets every table, as the spec says.
const (
	defaultPageSize = 100
	maxPageSize     = 1000
)

// tableNotFound is the 404 of a table that is not there.
func (s *Server) tableNotFound(ns []string, table string) *apiError {
	if !slices.Equal(ns, s.namespace) {
		return noSuchNamespace("namespace %s does not exist in catalog %q: this server serves the namespace %s",
			quote(namespaceName(ns)), s.cfg.Catalog, namespaceName(s.namespace))
	}
	return noSuchTable("table %s.%s does not exist in catalog %q", namespaceName(ns), table, s.cfg.Catalog)
}

// listTables answers GET /v1/{prefix}/namespaces/{namespace}/tables.
func (s *Server) listTables(w http.ResponseWriter, r *http.Request, req request) *apiError {
	if err := s.ours(r, req.namespace); err != nil {
		return err
	}
	q := r.URL.Query()
	paged := q.Has("pageToken")
	size := maxPageSize
	if paged {
		size = defaultPageSize
	}
	if v := q.Get("pageSize"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return badRequest("pageSize %s: want a whole number of 1 or more", quote(v))
		}
		size = min(n, maxPageSize)
	}
	after := ""
	if tok := q.Get("pageToken"); tok != "" {
		b, err := base64.RawURLEncoding.DecodeString(tok)
		if err != nil || checkName("page token", string(b)) != nil {
			return badRequest("pageToken %s is not one this server gave", quote(tok))
		}
		after = string(b)
	}
	ids := []tableIdent{}
	var next *string // null: no more pages
	for {
		names, err := s.rows.Tables(r.Context(), s.cfg.Namespace, after, size+1)
		if err != nil {
			return s.failed(r, "list tables", err)
		}
		more := len(names) > size
		names = names[:min(len(names), size)]
		for _, n := range names {
			ids = append(ids, tableIdent{s.namespace, n})
		}
		if !more {
			break
		}
		after = names[len(names)-1]
		if paged {
			tok := base64.RawURLEncoding.EncodeToString([]byte(after))
			next = &tok
			break
		}
	}
	writeJSON(w, http.StatusOK, struct {
		Identifiers []tableIdent `json:"identifiers"`
		Next        *string      `json:"next-page-token"`
	}{ids, next})
	return nil
}

// tableIdent is the spec's TableIdentifier.
type tableIdent struct {
	Namespace []string `json:"namespace"`
	Name      string   `json:"name"`
}

// tableExists answers HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}.
func (s *Server) tableExists(w http.ResponseWriter, r *http.Request, req request) *apiError {
	if err := s.exists(r, req); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// exists answers 404 when the request's table is not there.
func (s *Server) exists(r *http.Request, req request) *apiError {
	if !slices.Equal(req.namespace, s.namespace) {
		return s.tableNotFound(req.namespace, req.table)
	}
	loc, err := s.rows.MetadataLocation(r.Context(), s.cfg.Namespace, req.table)
	if err != nil {
		return s.failed(r, "read table", err)
	}
	if loc == "" {
		return s.tableNotFound(req.namespace, req.table)
	}
	return nil
}

// current reads the table's committed metadata location, then the file
// it names. A file can be gone only when later commits moved the pointer
// past it and maintenance swept it; then the pointer is read again. loc
// is "" when there is no such table.
func (s *Server) current(ctx context.Context, table string) (loc string, body []byte, err error) {
	for range 3 {
		if loc, err = s.rows.MetadataLocation(ctx, s.cfg.Namespace, table); err != nil || loc == "" {
			return "", nil, err
		}
		body, err = s.files.get(ctx, loc)
		if !errors.Is(err, errMetadataMissing) {
			return loc, body, err
		}
	}
	return "", nil, err
}

// loadTable answers GET /v1/{prefix}/namespaces/{namespace}/tables/{table}:
// the spec's LoadTableResult, whose metadata is the committed metadata
// file as stored. snapshots=refs is answered with every snapshot (the
// metadata as it is), which a client that asked for refs can use.
func (s *Server) loadTable(w http.ResponseWriter, r *http.Request, req request) *apiError {
	if m := r.URL.Query().Get("snapshots"); m != "" && m != "all" && m != "refs" {
		return badRequest("snapshots %s: want all or refs", quote(m))
	}
	if !slices.Equal(req.namespace, s.namespace) {
		return s.tableNotFound(req.namespace, req.table)
	}
	loc, body, err := s.current(r.Context(), req.table)
	if err != nil {
		return s.failed(r, "load table "+req.table, err)
	}
	if loc == "" {
		return s.tableNotFound(req.namespace, req.table)
	}
	var head bytes.Buffer
	head.WriteString(`{"metadata-location":`)
	locJSON, _ := json.Marshal(loc)
	head.Write(locJSON)
	head.WriteString(`,"config":`)
	config := s.tableConfig(wantsVended(r))
	cfgJSON, _ := json.Marshal(config)
	head.Write(cfgJSON)
	if creds := s.storageCredentials(wantsVended(r)); len(creds) > 0 {
		head.WriteString(`,"storage-credentials":`)
		credsJSON, _ := json.Marshal(creds)
		head.Write(credsJSON)
	}
	head.WriteString(`,"metadata":`)
	sum := sha256.Sum256(append(append([]byte(loc), 0), head.Bytes()...))
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", "no-cache")
	if matches(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(head.Len()+len(body)+1))
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(head.Bytes()); err != nil {
		return nil // the client went away
	}
	if _, err := w.Write(body); err != nil {
		return nil
	}
	_, _ = w.Write([]byte{'}'})
	return nil
}

// matches reads an If-None-Match header: a list of tags, or *.
func matches(header, etag string) bool {
	for t := range strings.SplitSeq(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == etag || t == "*" {
			return true
		}
	}
	return false
}

// tableConfig is loadTable's config: the storage settings, and the
// credentials when vended.
func (s *Server) tableConfig(vended bool) map[string]string {
	c := make(map[string]string, len(s.cfg.Storage.Properties)+len(s.cfg.Storage.Vended))
	for k, v := range s.cfg.Storage.Properties {
		c[k] = v
	}
	if vended {
		for k, v := range s.cfg.Storage.Vended {
			c[k] = v
		}
	}
	return c
}

// storageCredential is the spec's StorageCredential.
type storageCredential struct {
	Prefix string            `json:"prefix"`
	Config map[string]string `json:"config"`
}

// storageCredentials are the vended credentials, for the whole warehouse.
func (s *Server) storageCredentials(vended bool) []storageCredential {
	if !vended || len(s.cfg.Storage.Vended) == 0 {
		return nil
	}
	return []storageCredential{{Prefix: strings.TrimSuffix(s.warehouse, "/"), Config: s.cfg.Storage.Vended}}
}

// loadCredentials answers GET .../tables/{table}/credentials: the vended
// credentials, when configured; none otherwise.
func (s *Server) loadCredentials(w http.ResponseWriter, r *http.Request, req request) *apiError {
	if err := s.exists(r, req); err != nil {
		return err
	}
	creds := s.storageCredentials(true)
	if creds == nil {
		creds = []storageCredential{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"storage-credentials": creds})
	return nil
}
