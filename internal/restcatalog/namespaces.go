package restcatalog

import (
	"net/http"
	"slices"
	"strings"
)

// The server serves one namespace: the one handoff writes its tables to.
// Other namespaces of the same catalog (tables another engine made
// through the JDBC catalog) are not listed and load as missing: this
// server vouches only for tables whose one writer is handoff, and reads
// only files in its deep storage.

// namespaceName prints a namespace as the JDBC catalog stores it.
func namespaceName(parts []string) string { return strings.Join(parts, ".") }

// ours checks that ns is the namespace served and that it exists.
func (s *Server) ours(r *http.Request, ns []string) *apiError {
	if !slices.Equal(ns, s.namespace) {
		return noSuchNamespace("namespace %s does not exist in catalog %q: this server serves the namespace %s",
			quote(namespaceName(ns)), s.cfg.Catalog, namespaceName(s.namespace))
	}
	ok, err := s.rows.NamespaceExists(r.Context(), s.cfg.Namespace)
	if err != nil {
		return s.failed(r, "read namespace", err)
	}
	if !ok {
		return noSuchNamespace("namespace %s has no table yet: a datasource's first publish creates its table", namespaceName(ns))
	}
	return nil
}

// listNamespaces answers GET /v1/{prefix}/namespaces[?parent=]: the level
// of the served namespace under parent.
func (s *Server) listNamespaces(w http.ResponseWriter, r *http.Request, _ request) *apiError {
	var parent []string
	if p := r.URL.Query().Get("parent"); p != "" {
		var err *apiError
		if parent, err = parseNamespace(p); err != nil {
			return err
		}
	}
	ok, err := s.rows.NamespaceExists(r.Context(), s.cfg.Namespace)
	if err != nil {
		return s.failed(r, "read namespace", err)
	}
	under := ok && len(parent) <= len(s.namespace) && slices.Equal(parent, s.namespace[:len(parent)])
	if len(parent) > 0 && !under {
		return noSuchNamespace("namespace %s does not exist in catalog %q", quote(namespaceName(parent)), s.cfg.Catalog)
	}
	out := struct {
		Namespaces [][]string `json:"namespaces"`
		Next       *string    `json:"next-page-token"`
	}{Namespaces: [][]string{}}
	if under && len(parent) < len(s.namespace) {
		out.Namespaces = append(out.Namespaces, s.namespace[:len(parent)+1])
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// loadNamespace answers GET /v1/{prefix}/namespaces/{namespace}: its
// properties as stored.
func (s *Server) loadNamespace(w http.ResponseWriter, r *http.Request, req request) *apiError {
	if err := s.ours(r, req.namespace); err != nil {
		return err
	}
	props, err := s.rows.NamespaceProperties(r.Context(), s.cfg.Namespace)
	if err != nil {
		return s.failed(r, "read namespace properties", err)
	}
	writeJSON(w, http.StatusOK, struct {
		Namespace  []string          `json:"namespace"`
		Properties map[string]string `json:"properties"`
	}{s.namespace, props})
	return nil
}

// namespaceExists answers HEAD /v1/{prefix}/namespaces/{namespace}.
func (s *Server) namespaceExists(w http.ResponseWriter, r *http.Request, req request) *apiError {
	if err := s.ours(r, req.namespace); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
