package restcatalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// apiError is an answer in the spec's error model (IcebergErrorResponse):
// {"error": {"message", "type", "code"}}. Type names are those the
// reference implementation (Java) uses, which clients map back to their
// exceptions.
type apiError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    int    `json:"code"`

	allow      string // the Allow header of a 405
	retryAfter int    // seconds, for a 503
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.Code, e.Type, e.Message) }

func errorf(code int, typ, format string, args ...any) *apiError {
	return &apiError{Code: code, Type: typ, Message: fmt.Sprintf(format, args...)}
}

func badRequest(format string, args ...any) *apiError {
	return errorf(http.StatusBadRequest, "BadRequestException", format, args...)
}

func notAuthorized(format string, args ...any) *apiError {
	return errorf(http.StatusUnauthorized, "NotAuthorizedException", format, args...)
}

func forbidden(format string, args ...any) *apiError {
	return errorf(http.StatusForbidden, "ForbiddenException", format, args...)
}

func noSuchNamespace(format string, args ...any) *apiError {
	return errorf(http.StatusNotFound, "NoSuchNamespaceException", format, args...)
}

func noSuchTable(format string, args ...any) *apiError {
	return errorf(http.StatusNotFound, "NoSuchTableException", format, args...)
}

func notFound(typ, format string, args ...any) *apiError {
	return errorf(http.StatusNotFound, typ, format, args...)
}

// methodNotAllowed: the route exists, the method does not (Java clients
// map 405 to UnsupportedOperationException).
func methodNotAllowed(method, path, allow string) *apiError {
	e := errorf(http.StatusMethodNotAllowed, "UnsupportedOperationException", "%s is not a method of %s (allowed: %s)", method, path, allow)
	e.allow = allow
	return e
}

// internalError hides what went wrong from the client (the server logs
// it): messages of storage and database errors may name hosts and paths.
func internalError() *apiError {
	return errorf(http.StatusInternalServerError, "InternalServerError", "internal error reading the catalog; the server's log says more")
}

// unavailable: the catalog database does not answer; a retry may.
func unavailable() *apiError {
	e := errorf(http.StatusServiceUnavailable, "ServiceUnavailableException", "the catalog database does not answer; try again")
	e.retryAfter = 1
	return e
}

// write sends e; a HEAD answer has no body.
func (e *apiError) write(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	if e.allow != "" {
		h.Set("Allow", e.allow)
	}
	if e.retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(e.retryAfter))
	}
	if e.Code == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", `Bearer realm="handoff"`)
	}
	if r.Method == http.MethodHead {
		w.WriteHeader(e.Code)
		return
	}
	writeJSON(w, e.Code, struct {
		Error *apiError `json:"error"`
	}{e})
}

// writeJSON sends v as the answer's JSON body.
func writeJSON(w http.ResponseWriter, code int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // messages say <token>, not \u003ctoken\u003e
	err := enc.Encode(v)
	b := buf.Bytes()
	if err != nil {
		// Only our own response types reach here; they always encode.
		code, b = http.StatusInternalServerError, []byte(`{"error":{"message":"encode response","type":"InternalServerError","code":500}}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(code)
	_, _ = w.Write(b)
}
